package server

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/freshcache"
)

// DefaultJWTLeeway is the clock skew allowed when checking a JWT's exp, nbf
// and iat.
const DefaultJWTLeeway = 30 * time.Second

// Authenticator turns a request's bearer token into a principal. A UUID-form
// token is an API key, looked up by its hash; anything else is a JWT,
// verified against the configured HS256 secrets and JWKS keys. Without any
// JWT configuration every JWT is refused.
//
// With a change signal (AuthOptions.Changes), the principal of an API key
// and the existence of a JWT's workspace are cached, and each use is proven
// fresh by one data-version read: any commit, such as a key's revocation by
// another process, is seen on the very next request.
type Authenticator struct {
	store  canvas.AuthStore
	logger *slog.Logger
	now    canvas.Clock
	leeway time.Duration
	issuer string
	aud    string

	// secrets are the HS256 keys; a token without a kid of a JWKS key is
	// checked against them.
	secrets []jwt.VerificationKey
	// jwks maps a key id to the key and its one accepted algorithm.
	jwks map[string]jwksKey

	secretParser *jwt.Parser

	// keys maps the hash of a valid API key's token to its principal, and
	// workspaces a workspace id to whether it exists; both are nil (no
	// caching) for a store without a data version.
	keys       *freshcache.Cache[string, canvas.Principal]
	workspaces *freshcache.Cache[string, bool]
}

// authCacheSize bounds each of the Authenticator's caches.
const authCacheSize = 4096

// jwksKey is a public key of the JWKS with the algorithm pinned for it and
// a parser that accepts that algorithm alone.
type jwksKey struct {
	alg    string
	key    any
	parser *jwt.Parser
}

// AuthOptions configure an Authenticator. Store is required; without JWT
// secrets or keys every JWT is refused.
type AuthOptions struct {
	// Store holds the API keys and workspaces (an engine's Store).
	Store canvas.AuthStore
	// Changes proves the cached principals of API keys fresh (see
	// internal/freshcache); nil caches nothing.
	Changes canvas.ChangeVersioner
	// JWTSecrets are HS256 keys; several rotate secrets, and empty ones are
	// ignored.
	JWTSecrets [][]byte
	// JWKS accepts JWTs whose kid names a key of the set, signed with that
	// key's algorithm only. Load a set with LoadJWKSFile, which checks its
	// keys.
	JWKS *JWKS
	// Issuer, when set, must equal the iss claim of every JWT; Audience,
	// when set, must be in its aud claim.
	Issuer, Audience string
	// Logger receives, at debug level, why a JWT was refused; the caller
	// only ever learns that the token is invalid or expired.
	Logger *slog.Logger
	// Now is the clock JWT times are checked against; nil means time.Now.
	Now canvas.Clock
}

// NewAuthenticator returns an Authenticator that checks API keys against
// the store, and JWTs as the options configure, with DefaultJWTLeeway of
// clock skew.
func NewAuthenticator(opts AuthOptions) *Authenticator {
	a := &Authenticator{
		store:  opts.Store,
		logger: opts.Logger,
		now:    opts.Now,
		leeway: DefaultJWTLeeway,
		issuer: opts.Issuer,
		aud:    opts.Audience,
		jwks:   map[string]jwksKey{},
	}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	for _, secret := range opts.JWTSecrets {
		if len(secret) > 0 {
			a.secrets = append(a.secrets, secret)
		}
	}
	if opts.JWKS != nil {
		for kid, k := range opts.JWKS.keys {
			a.jwks[kid] = jwksKey{alg: k.alg, key: k.key}
		}
	}
	cv := opts.Changes
	a.keys = freshcache.New[string, canvas.Principal](cv, authCacheSize)
	a.workspaces = freshcache.New[string, bool](cv, authCacheSize)
	a.secretParser = a.newParser("HS256")
	for kid, k := range a.jwks {
		k.parser = a.newParser(k.alg)
		a.jwks[kid] = k
	}
	return a
}

// newParser returns a parser that accepts alg alone and checks the
// registered claims: exp required, nbf and iat honoured, and the issuer and
// audience when configured.
func (a *Authenticator) newParser(alg string) *jwt.Parser {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{alg}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(a.leeway),
		jwt.WithTimeFunc(a.now),
		jwt.WithStrictDecoding(),
	}
	if a.issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.issuer))
	}
	if a.aud != "" {
		opts = append(opts, jwt.WithAudience(a.aud))
	}
	return jwt.NewParser(opts...)
}

// Authenticate returns the principal of the request's bearer token, or
// UNAUTHORIZED.
func (a *Authenticator) Authenticate(r *http.Request) (*canvas.Principal, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, unauthorized()
	}
	if canvas.IsAPIKeyToken(token) {
		return a.apiKey(r, token)
	}
	return a.jwt(r.Context(), token)
}

// apiKey returns the principal of a valid API key. Only valid keys are
// cached; the caller gets its own copy of the cached principal.
func (a *Authenticator) apiKey(r *http.Request, token string) (*canvas.Principal, error) {
	hash := canvas.HashToken(token)
	p, err := a.keys.Get(r.Context(), hash, func(ctx context.Context) (canvas.Principal, error) {
		key, err := a.store.GetAPIKeyByHash(ctx, hash)
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return canvas.Principal{}, unauthorized()
		} else if err != nil {
			return canvas.Principal{}, err
		}
		if key.RevokedAt != nil {
			return canvas.Principal{}, unauthorized()
		}
		return canvas.Principal{
			WorkspaceID: key.WorkspaceID,
			KeyID:       key.ID,
			Name:        key.Name,
			Role:        key.Role,
			Projects:    key.Projects,
		}, nil
	})
	if err != nil {
		return nil, err
	}
	p.Projects = slices.Clone(p.Projects) // nil stays nil: every project
	return &p, nil
}

// tokenClaims are the claims a JWT must carry.
type tokenClaims struct {
	jwt.RegisteredClaims
	WorkspaceID string `json:"workspace_id"`
	Role        string `json:"role"`
	// Projects restricts the token to these projects; absent or null means
	// every project of the workspace, and an empty array none.
	Projects []string `json:"projects"`
	// Name and Email are optional, for display only (Principal.Name).
	Name  string `json:"name"`
	Email string `json:"email"`
}

// jwt verifies a JWT and returns its principal. Every failure, whatever the
// check that failed, is the same UNAUTHORIZED; the reason goes to the debug
// log only. The workspace must exist.
func (a *Authenticator) jwt(ctx context.Context, token string) (*canvas.Principal, error) {
	claims, err := a.verify(token)
	if err != nil {
		a.logger.DebugContext(ctx, "jwt refused", slog.String("reason", err.Error()))
		return nil, invalidToken()
	}
	ok, err := a.workspaceExists(ctx, claims.WorkspaceID)
	if err != nil {
		return nil, err
	} else if !ok {
		a.logger.DebugContext(ctx, "jwt refused", slog.String("reason", "unknown workspace"))
		return nil, invalidToken()
	}
	return &canvas.Principal{
		WorkspaceID: claims.WorkspaceID,
		UserID:      claims.Subject,
		Name:        cmp.Or(strings.TrimSpace(claims.Name), strings.TrimSpace(claims.Email)),
		Role:        canvas.Role(claims.Role),
		Projects:    claims.Projects,
	}, nil
}

// verify checks the token's signature with the key its kid names (a JWKS
// key) or else with the HS256 secrets, each with its algorithm pinned, then
// its times and claims.
func (a *Authenticator) verify(token string) (*tokenClaims, error) {
	kid, err := tokenKeyID(token)
	if err != nil {
		return nil, err
	}
	var (
		parser *jwt.Parser
		key    any
	)
	if k, ok := a.jwks[kid]; ok && kid != "" {
		parser, key = k.parser, k.key
	} else if len(a.secrets) > 0 {
		parser, key = a.secretParser, jwt.VerificationKeySet{Keys: a.secrets}
	} else {
		return nil, errors.New("no key for the token")
	}
	claims := &tokenClaims{}
	_, err = parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return key, nil })
	if err != nil {
		return nil, err
	}
	switch {
	case claims.Subject == "":
		return nil, errors.New("missing sub")
	case claims.WorkspaceID == "":
		return nil, errors.New("missing workspace_id")
	case !canvas.Role(claims.Role).Valid():
		return nil, errors.New("missing or unknown role")
	}
	return claims, nil
}

// tokenKeyID returns the kid of a JWT's header, unverified, to choose the
// key that will verify it.
func tokenKeyID(token string) (string, error) {
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return "", errors.New("malformed token")
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", errors.New("malformed token header")
	}
	var h struct {
		Kid any `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", errors.New("malformed token header")
	}
	kid, _ := h.Kid.(string)
	return kid, nil
}

// workspaceExists reports whether a workspace with that id exists.
func (a *Authenticator) workspaceExists(ctx context.Context, id string) (bool, error) {
	return a.workspaces.Get(ctx, id, func(ctx context.Context) (bool, error) {
		_, err := a.store.GetWorkspace(ctx, id)
		switch canvas.ErrorCode(err) {
		case "":
			return true, nil
		case canvas.ENOTFOUND:
			return false, nil
		}
		return false, err
	})
}

// JWKS is a checked set of public keys that verify JWTs: each has a kid and
// exactly one accepted algorithm.
type JWKS struct {
	keys map[string]jwksKey
}

// LoadJWKSFile reads a JSON Web Key Set (RFC 7517) from path. Every key must
// have a unique kid and be an RSA or EC key; its algorithm is the key's alg
// when given (RS256, RS384, RS512, PS256, PS384, PS512, or the ES algorithm
// of its curve), else RS256 for RSA and the curve's ES algorithm for EC.
// Private keys are reduced to their public half; symmetric keys are refused,
// so that a public key can never be used as an HMAC secret.
func LoadJWKSFile(path string) (*JWKS, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	return ParseJWKS(raw)
}

// ParseJWKS is LoadJWKSFile on the file's contents.
func ParseJWKS(raw []byte) (*JWKS, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("jwks: no keys")
	}
	out := &JWKS{keys: map[string]jwksKey{}}
	for i, k := range set.Keys {
		if k.KeyID == "" {
			return nil, fmt.Errorf("jwks: key %d has no kid", i)
		}
		if _, dup := out.keys[k.KeyID]; dup {
			return nil, fmt.Errorf("jwks: duplicate kid %q", k.KeyID)
		}
		if k.Use != "" && k.Use != "sig" {
			return nil, fmt.Errorf("jwks: key %q is not a signing key", k.KeyID)
		}
		pub := k.Public()
		if !pub.Valid() {
			return nil, fmt.Errorf("jwks: key %q is not an RSA or EC key", k.KeyID)
		}
		alg, err := keyAlgorithm(pub.Key, k.Algorithm)
		if err != nil {
			return nil, fmt.Errorf("jwks: key %q: %w", k.KeyID, err)
		}
		out.keys[k.KeyID] = jwksKey{alg: alg, key: pub.Key}
	}
	return out, nil
}

// keyAlgorithm returns the one algorithm a public key verifies: alg when it
// fits the key, else the key type's default.
func keyAlgorithm(key any, alg string) (string, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case "":
			return "RS256", nil
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
			return alg, nil
		}
	case *ecdsa.PublicKey:
		want := map[elliptic.Curve]string{
			elliptic.P256(): "ES256",
			elliptic.P384(): "ES384",
			elliptic.P521(): "ES512",
		}[k.Curve]
		if want == "" {
			return "", errors.New("unsupported curve")
		}
		if alg == "" || alg == want {
			return want, nil
		}
	default:
		return "", errors.New("only RSA and EC keys are supported")
	}
	return "", fmt.Errorf("algorithm %q does not fit the key", alg)
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func unauthorized() error {
	return canvas.Errorf(canvas.EUNAUTHORIZED, "Missing or invalid API key.")
}

func invalidToken() error {
	return canvas.Errorf(canvas.EUNAUTHORIZED, "Invalid or expired token.")
}
