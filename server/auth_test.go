package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authNow is the fixed clock of the JWT test servers.
var authNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newJWTEnv is newTestEnv with an authenticator that also takes JWTs as
// opts configure (its Store, Changes and clock are the env's), on the fixed
// clock authNow.
func newJWTEnv(t testing.TB, opts server.AuthOptions) *testEnv {
	t.Helper()
	return newTestEnv(t, func(_ testing.TB, db *sqlite.DB, o *server.Options) {
		opts.Store, opts.Changes, opts.Now = db, db, func() time.Time { return authNow }
		o.Auth = server.NewAuthenticator(opts)
	})
}

// claims returns valid claims of the env's workspace, changed by edit.
func (e *testEnv) claims(role canvas.Role, edit func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub":          "user-1",
		"workspace_id": e.Workspace.ID,
		"role":         string(role),
		"iat":          authNow.Add(-time.Minute).Unix(),
		"exp":          authNow.Add(time.Hour).Unix(),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// mustSign signs claims with method and key, naming kid when not empty.
func mustSign(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// assertUnauthorized checks that the JWT failure says nothing about which
// check failed.
func assertUnauthorized(t *testing.T, r *testResponse) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, r.Status, "body: %s", r.Body)
	assert.Equal(t, canvas.EUNAUTHORIZED, r.Code(t))
}

func TestAuthenticator_APIKey(t *testing.T) {
	e := newTestEnv(t)

	t.Run("OK", func(t *testing.T) {
		r := e.Do("GET", "/projects", e.Viewer, nil)
		assert.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	})
	t.Run("NoHeader", func(t *testing.T) {
		assertUnauthorized(t, e.Do("GET", "/projects", "", nil))
	})
	t.Run("WrongScheme", func(t *testing.T) {
		assertUnauthorized(t, e.Do("GET", "/projects", "", nil, "Authorization", "Basic "+e.Viewer))
	})
	t.Run("EmptyToken", func(t *testing.T) {
		assertUnauthorized(t, e.Do("GET", "/projects", "", nil, "Authorization", "Bearer "))
	})
	t.Run("MalformedToken", func(t *testing.T) {
		assertUnauthorized(t, e.Do("GET", "/projects", "not-a-token", nil))
	})
	t.Run("UnknownKey", func(t *testing.T) {
		assertUnauthorized(t, e.Do("GET", "/projects", uuid.NewString(), nil))
	})
	t.Run("Revoked", func(t *testing.T) {
		token := e.Key(canvas.RoleAdmin)
		require.Equal(t, http.StatusOK, e.Do("GET", "/projects", token, nil).Status)
		key, err := e.Store.GetAPIKeyByHash(context.Background(), canvas.HashToken(token))
		require.NoError(t, err)
		require.NoError(t, e.Store.RevokeAPIKey(context.Background(), key.ID))
		assertUnauthorized(t, e.Do("GET", "/projects", token, nil))
	})
	t.Run("JWTWithoutJWTConfig", func(t *testing.T) {
		token := mustSign(t, jwt.SigningMethodHS256, []byte("secret"), "", e.claims(canvas.RoleAdmin, nil))
		assertUnauthorized(t, e.Do("GET", "/projects", token, nil))
	})
	t.Run("Forbidden", func(t *testing.T) {
		r := e.Do("POST", "/projects", e.Viewer, map[string]any{"name": "p"})
		assert.Equal(t, http.StatusForbidden, r.Status, "body: %s", r.Body)
		assert.Equal(t, canvas.EFORBIDDEN, r.Code(t))
	})
}

func TestAuthenticator_JWTSecret(t *testing.T) {
	secret := []byte("a-long-enough-test-secret-of-32-bytes!")
	e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
	hs := func(role canvas.Role, edit func(jwt.MapClaims)) string {
		return mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(role, edit))
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	t.Run("OK", func(t *testing.T) {
		r := e.Do("GET", "/projects", hs(canvas.RoleViewer, nil), nil)
		assert.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	})
	t.Run("UserIdentity", func(t *testing.T) {
		r := e.Do("POST", "/prompt", hs(canvas.RoleEditor, nil), map[string]any{"title": "draft"})
		require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Body)
		assert.Equal(t, "user-1", r.Map(t)["createdBy"], "the principal's user id is sub")
	})
	t.Run("APIKeyStillWorks", func(t *testing.T) {
		assert.Equal(t, http.StatusOK, e.Do("GET", "/projects", e.Viewer, nil).Status)
	})
	t.Run("WithinLeeway", func(t *testing.T) {
		token := hs(canvas.RoleViewer, func(c jwt.MapClaims) { c["exp"] = authNow.Add(-10 * time.Second).Unix() })
		assert.Equal(t, http.StatusOK, e.Do("GET", "/projects", token, nil).Status)
	})
	t.Run("Forbidden", func(t *testing.T) {
		r := e.Do("POST", "/prompt", hs(canvas.RoleViewer, nil), map[string]any{"title": "draft"})
		assert.Equal(t, http.StatusForbidden, r.Status, "body: %s", r.Body)
		assert.Equal(t, canvas.EFORBIDDEN, r.Code(t))
	})
	t.Run("ProjectRestriction", func(t *testing.T) {
		var allowed, other canvas.Project
		r := e.Do("POST", "/projects", e.Admin, map[string]any{"name": "allowed"})
		require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Body)
		r.JSON(t, &allowed)
		r = e.Do("POST", "/projects", e.Admin, map[string]any{"name": "other"})
		require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Body)
		r.JSON(t, &other)

		token := hs(canvas.RoleEditor, func(c jwt.MapClaims) { c["projects"] = []string{allowed.ID} })
		r = e.Do("POST", "/prompt", token, map[string]any{"title": "in", "projectId": allowed.ID})
		assert.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Body)
		r = e.Do("POST", "/prompt", token, map[string]any{"title": "out", "projectId": other.ID})
		assert.Equal(t, http.StatusForbidden, r.Status, "body: %s", r.Body)
	})

	refused := map[string]string{
		"WrongSecret": mustSign(t, jwt.SigningMethodHS256, []byte("another-secret-of-the-same-length!!!!"), "", e.claims(canvas.RoleAdmin, nil)),
		"AlgNone":     mustSign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", e.claims(canvas.RoleAdmin, nil)),
		"RS256":       mustSign(t, jwt.SigningMethodRS256, rsaKey, "", e.claims(canvas.RoleAdmin, nil)),
		"HS512":       mustSign(t, jwt.SigningMethodHS512, secret, "", e.claims(canvas.RoleAdmin, nil)),
		"Expired":     hs(canvas.RoleAdmin, func(c jwt.MapClaims) { c["exp"] = authNow.Add(-time.Hour).Unix() }),
		"NoExp":       hs(canvas.RoleAdmin, func(c jwt.MapClaims) { delete(c, "exp") }),
		"NotYetValid": hs(canvas.RoleAdmin, func(c jwt.MapClaims) { c["nbf"] = authNow.Add(time.Hour).Unix() }),
		"IssuedLater": hs(canvas.RoleAdmin, func(c jwt.MapClaims) { c["iat"] = authNow.Add(time.Hour).Unix() }),
		"NoSub":       hs(canvas.RoleAdmin, func(c jwt.MapClaims) { delete(c, "sub") }),
		"NoWorkspace": hs(canvas.RoleAdmin, func(c jwt.MapClaims) { delete(c, "workspace_id") }),
		"NoRole":      hs(canvas.RoleAdmin, func(c jwt.MapClaims) { delete(c, "role") }),
		"UnknownRole": hs(canvas.RoleAdmin, func(c jwt.MapClaims) { c["role"] = "owner" }),
		"BadProjects": hs(canvas.RoleAdmin, func(c jwt.MapClaims) { c["projects"] = "all" }),
		"UnknownWorkspace": hs(canvas.RoleAdmin, func(c jwt.MapClaims) {
			c["workspace_id"] = uuid.NewString()
		}),
		"Tampered": func() string {
			// A viewer's signature on an admin's header and payload.
			viewer := strings.Split(hs(canvas.RoleViewer, nil), ".")
			admin := strings.Split(hs(canvas.RoleAdmin, nil), ".")
			return admin[0] + "." + admin[1] + "." + viewer[2]
		}(),
	}
	for name, token := range refused {
		t.Run(name, func(t *testing.T) {
			r := e.Do("GET", "/projects", token, nil)
			assertUnauthorized(t, r)
			msg, _ := r.Map(t)["message"].(string)
			assert.Equal(t, "Invalid or expired token.", msg, "the message does not tell which check failed")
		})
	}
}

// testJWKS writes a JWKS file holding the public halves of an RSA key (kid
// rsa-1, alg RS256) and an EC P-256 key (kid ec-1, alg left to the curve).
func testJWKS(t testing.TB) (path string, rsaKey *rsa.PrivateKey, ecKey *ecdsa.PrivateKey) {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &rsaKey.PublicKey, KeyID: "rsa-1", Algorithm: "RS256", Use: "sig"},
		{Key: &ecKey.PublicKey, KeyID: "ec-1"},
	}}
	raw, err := json.Marshal(set)
	require.NoError(t, err)
	path = filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	return path, rsaKey, ecKey
}

func TestAuthenticator_JWKS(t *testing.T) {
	path, rsaKey, ecKey := testJWKS(t)
	set, err := server.LoadJWKSFile(path)
	require.NoError(t, err)
	e := newJWTEnv(t, server.AuthOptions{JWKS: set, Issuer: "https://id.example", Audience: "canvas"})
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		return e.claims(canvas.RoleViewer, func(c jwt.MapClaims) {
			c["iss"] = "https://id.example"
			c["aud"] = []string{"canvas"}
			if edit != nil {
				edit(c)
			}
		})
	}

	t.Run("RSA", func(t *testing.T) {
		token := mustSign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(nil))
		r := e.Do("GET", "/projects", token, nil)
		assert.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	})
	t.Run("EC", func(t *testing.T) {
		token := mustSign(t, jwt.SigningMethodES256, ecKey, "ec-1", claims(nil))
		r := e.Do("GET", "/projects", token, nil)
		assert.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	})

	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	otherEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	refused := map[string]string{
		"UnknownKid":    mustSign(t, jwt.SigningMethodRS256, rsaKey, "rsa-2", claims(nil)),
		"NoKid":         mustSign(t, jwt.SigningMethodRS256, rsaKey, "", claims(nil)),
		"WrongKey":      mustSign(t, jwt.SigningMethodES256, otherEC, "ec-1", claims(nil)),
		"KidOfOtherKey": mustSign(t, jwt.SigningMethodES256, ecKey, "rsa-1", claims(nil)),
		"OtherAlg":      mustSign(t, jwt.SigningMethodRS512, rsaKey, "rsa-1", claims(nil)),
		// The classic confusion: HS256 with the RSA public key as the secret.
		"PublicKeyAsHMACSecret": mustSign(t, jwt.SigningMethodHS256, pubPEM, "rsa-1", claims(nil)),
		"WrongIssuer":           mustSign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })),
		"WrongAudience":         mustSign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["aud"] = "other" })),
		"NoIssuer":              mustSign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { delete(c, "iss") })),
	}
	for name, token := range refused {
		t.Run(name, func(t *testing.T) {
			assertUnauthorized(t, e.Do("GET", "/projects", token, nil))
		})
	}
}

func TestParseJWKS(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	encode := func(keys ...jose.JSONWebKey) []byte {
		raw, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		require.NoError(t, err)
		return raw
	}

	t.Run("OK", func(t *testing.T) {
		_, err := server.ParseJWKS(encode(
			jose.JSONWebKey{Key: rsaKey, KeyID: "private-is-reduced", Algorithm: "PS256"},
			jose.JSONWebKey{Key: &ecKey.PublicKey, KeyID: "p384", Algorithm: "ES384"},
		))
		assert.NoError(t, err)
	})
	invalid := map[string][]byte{
		"NotJSON":     []byte("{"),
		"Empty":       encode(),
		"NoKid":       encode(jose.JSONWebKey{Key: &rsaKey.PublicKey}),
		"DuplicateID": encode(jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "a"}, jose.JSONWebKey{Key: &ecKey.PublicKey, KeyID: "a"}),
		"Symmetric":   encode(jose.JSONWebKey{Key: []byte("secret"), KeyID: "hmac", Algorithm: "HS256"}),
		"AlgMismatch": encode(jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "a", Algorithm: "ES256"}),
		"CurveAlg":    encode(jose.JSONWebKey{Key: &ecKey.PublicKey, KeyID: "a", Algorithm: "ES256"}),
		"HSOnRSA":     encode(jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "a", Algorithm: "HS256"}),
		"Encryption":  encode(jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "a", Use: "enc"}),
	}
	for name, raw := range invalid {
		t.Run(name, func(t *testing.T) {
			_, err := server.ParseJWKS(raw)
			assert.Error(t, err)
		})
	}
	t.Run("MissingFile", func(t *testing.T) {
		_, err := server.LoadJWKSFile(filepath.Join(t.TempDir(), "none.json"))
		assert.Error(t, err)
	})
}

// TestAuthenticator_Names checks the display name a principal carries: an
// API key's name, or a JWT's name claim, else its email claim. The actor
// recorded in createdBy stays the key's or the user's id.
func TestAuthenticator_Names(t *testing.T) {
	secret := []byte("a-long-enough-test-secret-of-32-bytes!")
	e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
	auth := server.NewAuthenticator(server.AuthOptions{Store: e.Store, Changes: e.Store,
		JWTSecrets: [][]byte{secret}, Now: func() time.Time { return authNow }})
	principal := func(t *testing.T, token string) *canvas.Principal {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/projects", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		p, err := auth.Authenticate(r)
		require.NoError(t, err)
		return p
	}
	hs := func(edit func(jwt.MapClaims)) string {
		return mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(canvas.RoleEditor, edit))
	}
	created := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "editor", "name": "ci"})
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	named := created.Map(t)

	tests := []struct {
		name, token, want, actor string
	}{
		{"NamedKey", named["token"].(string), "ci", "key:" + named["id"].(string)},
		{"UnnamedKey", e.Viewer, "", ""},
		{"JWTName", hs(func(c jwt.MapClaims) { c["name"] = "Ada Lovelace"; c["email"] = "ada@example.com" }), "Ada Lovelace", "user-1"},
		{"JWTEmail", hs(func(c jwt.MapClaims) { c["email"] = "ada@example.com" }), "ada@example.com", "user-1"},
		{"JWTNeither", hs(nil), "", "user-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := principal(t, tt.token)
			assert.Equal(t, tt.want, p.Name)
			if tt.actor != "" {
				assert.Equal(t, tt.actor, p.Actor())
			}
		})
	}
}
