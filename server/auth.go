package server

import (
	"net/http"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Authenticator turns a request's bearer token into a principal. A UUID-form
// token is an API key, looked up by its hash; anything else is a JWT.
type Authenticator struct {
	store canvas.Store
}

// NewAuthenticator returns an Authenticator that checks API keys against
// store.
func NewAuthenticator(store canvas.Store) *Authenticator {
	return &Authenticator{store: store}
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
	return nil, unauthorized()
}

func (a *Authenticator) apiKey(r *http.Request, token string) (*canvas.Principal, error) {
	key, err := a.store.GetAPIKeyByHash(r.Context(), canvas.HashToken(token))
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, unauthorized()
	} else if err != nil {
		return nil, err
	}
	if key.RevokedAt != nil {
		return nil, unauthorized()
	}
	return &canvas.Principal{
		WorkspaceID: key.WorkspaceID,
		KeyID:       key.ID,
		Role:        key.Role,
		Projects:    key.Projects,
	}, nil
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
