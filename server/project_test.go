package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiCase is one row of an HTTP table test: a request and what it must
// answer. For an error, code is the error code and paths, when not nil, the
// detail paths of the VALIDATION body in any order.
type apiCase struct {
	name   string
	method string
	path   string
	token  string
	body   any
	status int
	code   string
	paths  []string
}

// run sends every case as a subtest of t.
func runCases(t *testing.T, e *testEnv, cases []apiCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := e.Do(tc.method, tc.path, tc.token, tc.body)
			require.Equal(t, tc.status, res.Status, "%s %s: %s", tc.method, tc.path, res.Body)
			if tc.status < 400 {
				return
			}
			b := readError(t, res)
			assert.Equal(t, tc.code, b.Code)
			if tc.paths != nil {
				var got []string
				for _, d := range b.Details {
					got = append(got, d.Path)
				}
				assert.ElementsMatch(t, tc.paths, got, "details: %s", res.Body)
			}
		})
	}
}

// invalidPost is a case of a POST whose body must fail validation: 422
// VALIDATION with exactly the given detail paths.
func invalidPost(name, path, token string, body any, paths ...string) apiCase {
	return apiCase{name: name, method: "POST", path: path, token: token, body: body,
		status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: paths}
}

// merged returns a new body: base with fields set over it.
func merged(base, fields map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(fields))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// mustCreate sends a POST that must answer 201 and returns the body.
func mustCreate(t testing.TB, e *testEnv, path, token string, body any) map[string]any {
	t.Helper()
	res := e.Do("POST", path, token, body)
	require.Equal(t, http.StatusCreated, res.Status, "POST %s: %s", path, res.Body)
	return res.Map(t)
}

// mustProjectID creates a project through the API and returns its id.
func mustProjectID(t testing.TB, e *testEnv, name string) string {
	t.Helper()
	return mustCreate(t, e, "/projects", e.Admin, map[string]any{"name": name})["id"].(string)
}

func TestProject_Create(t *testing.T) {
	e := newTestEnv(t)
	t.Run("OK", func(t *testing.T) {
		p := mustCreate(t, e, "/projects", e.Admin, map[string]any{"name": "Research"})
		assert.Equal(t, "Research", p["name"])
		assert.Equal(t, e.Workspace.ID, p["workspaceId"])
		assert.NotEmpty(t, p["id"])
		assert.NotEmpty(t, p["createdAt"])
	})
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/projects", body: map[string]any{"name": "x"},
			status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Forbidden", method: "POST", path: "/projects", token: e.Editor, body: map[string]any{"name": "x"},
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NameMissing", method: "POST", path: "/projects", token: e.Admin, body: map[string]any{},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/name"}},
		{name: "NameBlank", method: "POST", path: "/projects", token: e.Admin, body: map[string]any{"name": "   "},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/name"}},
		{name: "NameTooLong", method: "POST", path: "/projects", token: e.Admin, body: map[string]any{"name": strings.Repeat("n", 257)},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/name"}},
		{name: "MalformedJSON", method: "POST", path: "/projects", token: e.Admin, body: `{"name":`,
			status: http.StatusBadRequest, code: canvas.EBADREQUEST},
	})
}

func TestProject_List(t *testing.T) {
	e := newTestEnv(t)
	a := mustProjectID(t, e, "a")
	b := mustProjectID(t, e, "b")
	ids := func(t *testing.T, token string) []string {
		t.Helper()
		res := e.Do("GET", "/projects", token, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var list []canvas.Project
		res.JSON(t, &list)
		out := []string{}
		for _, p := range list {
			out = append(out, p.ID)
		}
		return out
	}

	t.Run("OK", func(t *testing.T) {
		assert.ElementsMatch(t, []string{a, b}, ids(t, e.Viewer))
	})
	t.Run("RestrictedKey", func(t *testing.T) {
		assert.Equal(t, []string{b}, ids(t, e.Key(canvas.RoleViewer, b)))
	})
	t.Run("OtherWorkspace", func(t *testing.T) {
		ws := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(t.Context(), ws))
		assert.Equal(t, []string{}, ids(t, e.KeyIn(ws.ID, canvas.RoleAdmin)))
	})
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/projects", token: "not-a-token",
			status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "MethodNotAllowed", method: "PUT", path: "/projects", token: e.Admin,
			status: http.StatusMethodNotAllowed, code: canvas.EMETHODNOTALLOWED},
	})
}
