package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
)

// actorsPath is GET /actors naming ids.
func actorsPath(ids ...string) string {
	q := url.Values{"id": ids}
	return "/actors?" + q.Encode()
}

// TestActors_Names checks GET /actors: a named key of the workspace by its
// name, revoked or not; the caller's own id by the caller's display name;
// any other id by itself; each id once, in order.
func TestActors_Names(t *testing.T) {
	secret := []byte("a-long-enough-test-secret-of-32-bytes!")
	e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
	create := func(name string) (id, token string) {
		t.Helper()
		res := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "viewer", "name": name})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		m := res.Map(t)
		return "key:" + m["id"].(string), m["token"].(string)
	}
	ci, ciToken := create("ci")
	laptop, _ := create("Ada's laptop")
	require.Equal(t, http.StatusNoContent, e.Do(http.MethodDelete, "/api-keys/"+strings.TrimPrefix(laptop, "key:"), e.Admin, nil).Status)
	keys := e.Do(http.MethodGet, "/api-keys", e.Admin, nil).Map(t)["data"].([]any)
	unnamed := "key:" + keys[0].(map[string]any)["id"].(string)
	stranger := "key:" + uuid.NewString()
	jwtAda := mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(canvas.RoleViewer, func(c jwt.MapClaims) { c["email"] = "ada@example.com" }))

	names := func(token string, ids ...string) map[string]string {
		t.Helper()
		res := e.Do(http.MethodGet, actorsPath(ids...), token, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var body struct {
			Data []struct{ ID, Name string }
		}
		res.JSON(t, &body)
		out := map[string]string{}
		var order []string
		for _, a := range body.Data {
			out[a.ID] = a.Name
			order = append(order, a.ID)
		}
		assert.Len(t, order, len(out), "each id once")
		return out
	}
	got := names(e.Viewer, ci, laptop, unnamed, stranger, "user-1", "system", ci)
	assert.Equal(t, map[string]string{ci: "ci", laptop: "Ada's laptop", unnamed: unnamed, stranger: stranger,
		"user-1": "user-1", "system": "system"}, got)
	assert.Equal(t, map[string]string{"user-1": "ada@example.com", "user-2": "user-2", ci: "ci"},
		names(jwtAda, "user-1", "user-2", ci), "a JWT user's own id by its claim, another user's by itself")
	assert.Equal(t, map[string]string{ci: "ci"}, names(ciToken, ci))

	// Order is kept.
	res := e.Do(http.MethodGet, actorsPath("system", ci, "user-9"), e.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status)
	assert.JSONEq(t, `{"data":[{"id":"system","name":"system"},{"id":"`+ci+`","name":"ci"},{"id":"user-9","name":"user-9"}]}`, string(res.Body))
}

// TestActors_Refused checks GET /actors' refusals.
func TestActors_Refused(t *testing.T) {
	e := newTestEnv(t)
	many := make([]string, canvas.MaxActorIDs+1)
	for i := range many {
		many[i] = "user-" + uuid.NewString()
	}
	for name, tc := range map[string]struct {
		path, token string
		status      int
		code, at    string
	}{
		"NoToken": {actorsPath("system"), "", http.StatusUnauthorized, "", ""},
		"NoID":    {"/actors", e.Viewer, http.StatusUnprocessableEntity, "VALIDATION", "/query/id"},
		"TooMany": {actorsPath(many...), e.Viewer, http.StatusUnprocessableEntity, "VALIDATION", "/query/id"},
		"Blank":   {actorsPath("system", " "), e.Viewer, http.StatusUnprocessableEntity, "VALIDATION", "/query/id/1"},
	} {
		t.Run(name, func(t *testing.T) {
			res := e.Do(http.MethodGet, tc.path, tc.token, nil)
			require.Equal(t, tc.status, res.Status, "%s", res.Body)
			if tc.code != "" {
				assert.Equal(t, tc.code, res.Code(t))
				assert.Contains(t, string(res.Body), `"`+tc.at+`"`)
			}
		})
	}
}

// TestMe checks GET /me: a named key, a key limited to a project and a JWT
// user each learn the actor id records keep for them, their name, role and
// projects.
func TestMe(t *testing.T) {
	secret := []byte("a-long-enough-test-secret-of-32-bytes!")
	e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
	me := func(token string) map[string]any {
		t.Helper()
		res := e.Do(http.MethodGet, "/me", token, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return res.Map(t)
	}
	res := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "editor", "name": "alice"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	key := res.Map(t)
	got := me(key["token"].(string))
	assert.Equal(t, "key:"+key["id"].(string), got["actorId"])
	assert.Equal(t, key["id"], got["keyId"])
	assert.Nil(t, got["userId"])
	assert.Equal(t, "alice", got["name"])
	assert.Equal(t, "editor", got["role"])
	assert.Nil(t, got["projects"], "every project")

	project := mustCreate(t, e, "/projects", e.Admin, map[string]any{"name": "p"})["id"].(string)
	limited := e.Key(canvas.RoleViewer, project)
	assert.Equal(t, []any{project}, me(limited)["projects"])

	ada := mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(canvas.RoleAdmin, func(c jwt.MapClaims) { c["name"] = "Ada" }))
	got = me(ada)
	assert.Equal(t, "user-1", got["actorId"])
	assert.Equal(t, "user-1", got["userId"])
	assert.Nil(t, got["keyId"])
	assert.Equal(t, "Ada", got["name"])
	assert.Equal(t, "admin", got["role"])

	assert.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, "/me", "", nil).Status)
}
