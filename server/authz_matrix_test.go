package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// callerKind says how the authorization matrix expects a caller to be
// answered.
type callerKind int

const (
	// badCredentials is refused before anything else: 401.
	badCredentials callerKind = iota
	// member is a principal of the world's workspace without project
	// restriction: allowed when its role includes the route's.
	member
	// otherWorkspace is an admin of another workspace: the world's
	// resources do not exist for it (404).
	otherWorkspace
	// otherProject is an admin of the world's workspace limited to P2: the
	// resources of P1 are forbidden to it (403).
	otherProject
)

// matrixCaller is one row of the caller axis of the matrix.
type matrixCaller struct {
	name  string
	token string
	kind  callerKind
	role  canvas.Role // of a member
}

// matrixCallers returns every kind of caller, with the world's workspace's
// keys and JWTs signed as the full test server expects them (or not).
func matrixCallers(t *testing.T, e *fullEnv, w *world) []matrixCaller {
	ctx := context.Background()
	revoked := e.Key(canvas.RoleAdmin)
	key, err := e.Store.GetAPIKeyByHash(ctx, canvas.HashToken(revoked))
	require.NoError(t, err)
	require.NoError(t, e.Store.RevokeAPIKey(ctx, key.ID))
	other := &canvas.Workspace{Name: "other"}
	require.NoError(t, e.Store.CreateWorkspace(ctx, other))

	now := time.Now()
	claims := func(exp time.Time) jwt.MapClaims {
		return jwt.MapClaims{"sub": "user-1", "workspace_id": e.Workspace.ID, "role": "admin",
			"iat": now.Add(-2 * time.Hour).Unix(), "exp": exp.Unix()}
	}
	valid := claims(now.Add(time.Hour))
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, valid).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)

	return []matrixCaller{
		{name: "NoToken", token: "", kind: badCredentials},
		{name: "GarbageToken", token: "not-a-token", kind: badCredentials},
		{name: "RevokedKey", token: revoked, kind: badCredentials},
		{name: "ExpiredJWT", token: mustSign(t, jwt.SigningMethodHS256, fullJWTSecret, "", claims(now.Add(-time.Hour))), kind: badCredentials},
		{name: "JWTOtherAlgorithm", token: mustSign(t, jwt.SigningMethodHS384, fullJWTSecret, "", valid), kind: badCredentials},
		{name: "JWTAlgNone", token: none, kind: badCredentials},
		{name: "OtherWorkspaceAdmin", token: e.KeyIn(other.ID, canvas.RoleAdmin), kind: otherWorkspace},
		{name: "OtherProjectAdmin", token: e.Key(canvas.RoleAdmin, w.P2), kind: otherProject},
		{name: "Viewer", token: e.Viewer, kind: member, role: canvas.RoleViewer},
		{name: "Editor", token: e.Editor, kind: member, role: canvas.RoleEditor},
		{name: "AdminJWT", token: mustSign(t, jwt.SigningMethodHS256, fullJWTSecret, "", valid), kind: member, role: canvas.RoleAdmin},
		{name: "Admin", token: e.Admin, kind: member, role: canvas.RoleAdmin},
	}
}

// authCodes are the error codes of the matrix's refusals.
var authCodes = map[int]string{
	http.StatusUnauthorized: canvas.EUNAUTHORIZED,
	http.StatusForbidden:    canvas.EFORBIDDEN,
	http.StatusNotFound:     canvas.ENOTFOUND,
}

// unrestrictedRoutes are the routes of the caller's own workspace that a
// principal limited to some projects may not call: managing API keys,
// since a key it made could reach more than it does, and setting model
// prices, which hold for every project, and reading the audit log, which
// holds every project's changes. Such a caller gets 403 there like on the
// resources of another project.
var unrestrictedRoutes = map[string]bool{
	"GET /api-keys":         true,
	"POST /api-keys":        true,
	"PUT /models/{name...}": true,
	"GET /audit-events":     true,
}

// want returns the status the matrix expects of caller on route c.
func (c routeCase) want(caller matrixCaller) int {
	switch {
	case c.role == "":
		return c.ok // a public route reads no token
	case caller.kind == badCredentials:
		return http.StatusUnauthorized
	case caller.kind == member && !caller.role.Includes(c.role):
		return http.StatusForbidden
	case caller.kind == otherWorkspace && c.scoped:
		return http.StatusNotFound
	case caller.kind == otherProject && (c.scoped || unrestrictedRoutes[c.route]):
		return http.StatusForbidden
	}
	return c.ok
}

// TestAuthorizationMatrix sends every route of the server as every kind of
// caller: bad credentials are 401, a role too weak or another project's
// resources 403, another workspace's resources 404, and everything else
// succeeds. The route table must cover the server's route list, so that a
// new route cannot go without its row.
func TestAuthorizationMatrix(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	callers := matrixCallers(t, e, w)
	for _, c := range cases {
		t.Run(c.route, func(t *testing.T) {
			for _, caller := range callers {
				want := c.want(caller)
				r := c.send(t, e.testEnv, caller.token)
				if !assert.Equal(t, want, r.Status, "%s as %s: %s", c.route, caller.name, r.Body) {
					continue
				}
				if code, ok := authCodes[want]; ok {
					assert.Equal(t, code, r.Code(t), "%s as %s", c.route, caller.name)
				}
			}
		})
	}
}
