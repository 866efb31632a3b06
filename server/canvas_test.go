package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canvasFields are the fields every canvas response carries, null or not.
var canvasFields = []string{
	"id", "title", "projectId", "inferencesPercentage", "layoutVersion", "workspaceId", "customTags",
	"allowedCredentials", "createdBy", "updatedBy", "deletedBy", "createdAt", "updatedAt", "deletedAt",
}

// mustCanvas creates a canvas of project through the API and returns it.
func mustCanvas(t testing.TB, e *testEnv, projectID, title string) map[string]any {
	t.Helper()
	return mustCreate(t, e, "/prompt", e.Editor, map[string]any{"title": title, "projectId": projectID})
}

func TestCanvas_Create(t *testing.T) {
	e := newTestEnv(t)
	project := mustProjectID(t, e, "main")
	other := mustProjectID(t, e, "other")

	t.Run("OK", func(t *testing.T) {
		c := mustCreate(t, e, "/prompt", e.Editor, map[string]any{
			"title": "Support", "projectId": project, "customTags": []string{"a"},
			"layoutVersion": "v2", "inferencesPercentage": "2.5",
		})
		for _, f := range canvasFields {
			assert.Contains(t, c, f)
		}
		assert.Equal(t, "Support", c["title"])
		assert.Equal(t, project, c["projectId"])
		assert.Equal(t, e.Workspace.ID, c["workspaceId"])
		assert.Equal(t, []any{"a"}, c["customTags"])
		assert.Equal(t, "v2", c["layoutVersion"])
		assert.Equal(t, "2.5", c["inferencesPercentage"])
		assert.Nil(t, c["allowedCredentials"])
		assert.Nil(t, c["deletedAt"])
		assert.Nil(t, c["deletedBy"])
		assert.True(t, strings.HasPrefix(c["createdBy"].(string), "key:"), "createdBy names the API key")
		assert.NotContains(t, c, "favorited", "no favorited for an API key")
		assert.NotContains(t, c, "promotedVersion")
		assert.NotContains(t, c, "latestVersion")
	})
	t.Run("Defaults", func(t *testing.T) {
		c := mustCreate(t, e, "/prompt", e.Editor, map[string]any{"title": "t", "projectId": project, "allowedCredentials": []string{}})
		assert.Equal(t, "v1", c["layoutVersion"])
		assert.Equal(t, "0", c["inferencesPercentage"])
		assert.Equal(t, []any{}, c["customTags"])
		assert.Equal(t, []any{}, c["allowedCredentials"], "an empty list is not null")
	})

	valid := map[string]any{"title": "t", "projectId": project}
	with := func(k string, v any) map[string]any { return merged(valid, map[string]any{k: v}) }
	invalid := func(name string, body any, paths ...string) apiCase {
		return invalidPost(name, "/prompt", e.Editor, body, paths...)
	}
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/prompt", body: valid, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "POST", path: "/prompt", token: e.Viewer, body: valid, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "POST", path: "/prompt", token: e.Key(canvas.RoleEditor, other), body: valid,
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "ProjectNotFound", method: "POST", path: "/prompt", token: e.Editor, body: with("projectId", uuid.NewString()),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "MalformedJSON", method: "POST", path: "/prompt", token: e.Editor, body: "{", status: http.StatusBadRequest, code: canvas.EBADREQUEST},
		invalid("TitleMissing", map[string]any{"projectId": project}, "/json/title"),
		invalid("TitleTooLong", with("title", strings.Repeat("é", 257)), "/json/title"),
		invalid("TitleBlank", with("title", "  "), "/json/title"),
		invalid("LayoutVersion", with("layoutVersion", "v3"), "/json/layoutVersion"),
		invalid("InferencesPercentage", with("inferencesPercentage", "101"), "/json/inferencesPercentage"),
		invalid("InferencesPercentageText", with("inferencesPercentage", "half"), "/json/inferencesPercentage"),
		invalid("ProjectID", with("projectId", "nope"), "/json/projectId"),
		invalid("DraftWithoutUser", map[string]any{"title": "t"}, "/json/projectId"),
		invalid("AllowedCredentials", with("allowedCredentials", []string{"nope"}), "/json/allowedCredentials/0"),
		invalid("EmptyTag", with("customTags", []string{""}), "/json/customTags/0"),
		invalid("WrongTypes", map[string]any{"title": 1, "projectId": project, "customTags": "a"}, "/json/title", "/json/customTags"),
	})
}

func TestCanvas_Get(t *testing.T) {
	e := newTestEnv(t)
	project := mustProjectID(t, e, "main")
	c := mustCanvas(t, e, project, "c")
	id := c["id"].(string)

	t.Run("OK", func(t *testing.T) {
		res := e.Do("GET", "/prompt/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		got := res.Map(t)
		assert.Equal(t, c, got)
	})
	ws := &canvas.Workspace{Name: "elsewhere"}
	require.NoError(t, e.Store.CreateWorkspace(t.Context(), ws))
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/prompt/" + id, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "NotFound", method: "GET", path: "/prompt/" + uuid.NewString(), token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OtherWorkspace", method: "GET", path: "/prompt/" + id, token: e.KeyIn(ws.ID, canvas.RoleAdmin),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Forbidden", method: "GET", path: "/prompt/" + id, token: e.Key(canvas.RoleViewer, uuid.NewString()),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "MalformedID", method: "GET", path: "/prompt/nope", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/path/id"}},
	})
}

func TestCanvas_Update(t *testing.T) {
	e := newTestEnv(t)
	project := mustProjectID(t, e, "main")
	other := mustProjectID(t, e, "other")
	id := mustCanvas(t, e, project, "c")["id"].(string)
	path := "/prompt/" + id

	t.Run("OK", func(t *testing.T) {
		cred := uuid.NewString()
		res := e.Do("PATCH", path, e.Editor, map[string]any{
			"title": "renamed", "customTags": []string{"x", "y"}, "layoutVersion": "v2",
			"inferencesPercentage": "50", "allowedCredentials": []string{cred}, "projectId": other,
		})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		c := res.Map(t)
		assert.Equal(t, "renamed", c["title"])
		assert.Equal(t, []any{"x", "y"}, c["customTags"])
		assert.Equal(t, "v2", c["layoutVersion"])
		assert.Equal(t, "50", c["inferencesPercentage"])
		assert.Equal(t, []any{cred}, c["allowedCredentials"])
		assert.Equal(t, other, c["projectId"])
	})
	t.Run("NullClears", func(t *testing.T) {
		res := e.Do("PATCH", path, e.Editor, map[string]any{"allowedCredentials": nil})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		c := res.Map(t)
		assert.Nil(t, c["allowedCredentials"], "null means unrestricted")
		assert.Equal(t, "renamed", c["title"], "absent fields are kept")
	})
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "PATCH", path: path, body: map[string]any{"title": "x"}, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "PATCH", path: path, token: e.Viewer, body: map[string]any{"title": "x"}, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "PATCH", path: path, token: e.Key(canvas.RoleEditor, project), body: map[string]any{"title": "x"},
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "PATCH", path: "/prompt/" + uuid.NewString(), token: e.Editor, body: map[string]any{"title": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "ProjectNotFound", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"projectId": uuid.NewString()},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "FavoritedByKey", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"favorited": true},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/favorited"}},
		{name: "DraftByKey", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"projectId": nil},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/projectId"}},
		{name: "Validation", method: "PATCH", path: path, token: e.Editor,
			body:   map[string]any{"title": strings.Repeat("x", 257), "layoutVersion": "v0", "inferencesPercentage": "-3"},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID,
			paths: []string{"/json/title", "/json/layoutVersion", "/json/inferencesPercentage"}},
	})
}

func TestCanvas_Delete(t *testing.T) {
	e := newTestEnv(t)
	project := mustProjectID(t, e, "main")
	id := mustCanvas(t, e, project, "doomed")["id"].(string)
	kept := mustCanvas(t, e, project, "kept")["id"].(string)
	version := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": id})["id"].(string)

	runCases(t, e, []apiCase{
		{name: "Viewer", method: "DELETE", path: "/prompt/" + id, token: e.Viewer, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "DELETE", path: "/prompt/" + id, token: e.Key(canvas.RoleEditor, uuid.NewString()),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "OK", method: "DELETE", path: "/prompt/" + id, token: e.Editor, status: http.StatusNoContent},
		{name: "GetVanished", method: "GET", path: "/prompt/" + id, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "PatchVanished", method: "PATCH", path: "/prompt/" + id, token: e.Editor, body: map[string]any{"title": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "DeleteAgain", method: "DELETE", path: "/prompt/" + id, token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "VersionVanished", method: "GET", path: "/prompt-version/" + version, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "VersionsVanished", method: "GET", path: "/prompt-version?promptId=" + id, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
	})
	t.Run("EmptyBody", func(t *testing.T) {
		res := e.Do("DELETE", "/prompt/"+kept, e.Editor, nil)
		require.Equal(t, http.StatusNoContent, res.Status)
		assert.Empty(t, res.Body)
	})
	t.Run("ListVanished", func(t *testing.T) {
		res := e.Do("GET", "/prompt", e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.JSONEq(t, "[]", string(res.Body))
	})
}

func TestCanvas_List(t *testing.T) {
	e := newTestEnv(t)
	a := mustProjectID(t, e, "a")
	b := mustProjectID(t, e, "b")
	ca := mustCanvas(t, e, a, "in a")["id"].(string)
	cb := mustCanvas(t, e, b, "in b")["id"].(string)

	list := func(t *testing.T, token, query string) []map[string]any {
		t.Helper()
		res := e.Do("GET", "/prompt"+query, token, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var out []map[string]any
		res.JSON(t, &out)
		return out
	}
	ids := func(list []map[string]any) []string {
		out := []string{}
		for _, c := range list {
			out = append(out, c["id"].(string))
		}
		return out
	}
	tests := []struct {
		name  string
		token string
		query string
		want  []string
	}{
		{"All", e.Viewer, "", []string{ca, cb}},
		{"Project", e.Viewer, "?projectId=" + a, []string{ca}},
		{"RestrictedKey", e.Key(canvas.RoleViewer, b), "", []string{cb}},
		{"SameWorkspace", e.Viewer, "?workspaceId=" + e.Workspace.ID, []string{ca, cb}},
		{"OtherWorkspace", e.Viewer, "?workspaceId=" + uuid.NewString(), []string{}},
		{"DraftsOnlyKey", e.Admin, "?draftsOnly=true", []string{}},
		{"DraftsOnlyFalse", e.Viewer, "?draftsOnly=false", []string{ca, cb}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := list(t, tt.token, tt.query)
			assert.ElementsMatch(t, tt.want, ids(got))
			for _, c := range got {
				assert.NotContains(t, c, "favorited", "no favorited for an API key")
			}
		})
	}

	t.Run("IncludePromotedVersion", func(t *testing.T) {
		for _, c := range list(t, e.Viewer, "?includePromotedVersion=false") {
			assert.NotContains(t, c, "promotedVersion", "absent when not asked")
			assert.NotContains(t, c, "latestVersion", "absent when not asked")
		}
		for _, c := range list(t, e.Viewer, "?includePromotedVersion=true") {
			require.Contains(t, c, "promotedVersion")
			require.Contains(t, c, "latestVersion")
			assert.Nil(t, c["promotedVersion"], "null without a promoted version")
			assert.Nil(t, c["latestVersion"], "null without versions")
		}

		v1 := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": ca})["id"].(string)
		v2 := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": ca})["id"].(string)
		res := e.Do("PATCH", "/prompt-version/"+v1, e.Editor, map[string]any{"promoted": true})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)

		for _, c := range list(t, e.Viewer, "?includePromotedVersion=true&projectId="+a) {
			promoted, ok := c["promotedVersion"].(map[string]any)
			require.True(t, ok, "promotedVersion is a version: %v", c["promotedVersion"])
			latest, ok := c["latestVersion"].(map[string]any)
			require.True(t, ok, "latestVersion is a version: %v", c["latestVersion"])
			assert.Equal(t, v1, promoted["id"])
			assert.Equal(t, true, promoted["promoted"])
			assert.Equal(t, v2, latest["id"])
		}
	})
	runCases(t, e, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/prompt", status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "ForbiddenProject", method: "GET", path: "/prompt?projectId=" + a, token: e.Key(canvas.RoleViewer, b),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "Validation", method: "GET", path: "/prompt?projectId=x&workspaceId=y&includePromotedVersion=maybe&draftsOnly=2", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID,
			paths: []string{"/query/projectId", "/query/workspaceId", "/query/includePromotedVersion", "/query/draftsOnly"}},
	})
}

// TestCanvas_UserIdentity checks, with a JWT that carries a user, what only
// such a token sees: personal drafts and favorited.
func TestCanvas_UserIdentity(t *testing.T) {
	secret := []byte("canvas-test-secret-canvas-test-secret")
	e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
	user := func(sub string) string {
		return mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(canvas.RoleEditor, func(c jwt.MapClaims) { c["sub"] = sub }))
	}
	alice, bob := user("alice"), user("bob")
	project := mustProjectID(t, e, "main")
	shared := mustCreate(t, e, "/prompt", alice, map[string]any{"title": "shared", "projectId": project})
	draft := mustCreate(t, e, "/prompt", alice, map[string]any{"title": "mine"})

	t.Run("Draft", func(t *testing.T) {
		assert.Nil(t, draft["projectId"])
		assert.Equal(t, "alice", draft["createdBy"])
		assert.Equal(t, false, draft["favorited"], "favorited is present for a user")
		assert.Equal(t, http.StatusOK, e.Do("GET", "/prompt/"+draft["id"].(string), alice, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/prompt/"+draft["id"].(string), bob, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/prompt/"+draft["id"].(string), e.Admin, nil).Status)
	})
	t.Run("DraftsOnly", func(t *testing.T) {
		res := e.Do("GET", "/prompt?draftsOnly=true", alice, nil)
		require.Equal(t, http.StatusOK, res.Status)
		var list []map[string]any
		res.JSON(t, &list)
		require.Len(t, list, 1)
		assert.Equal(t, draft["id"], list[0]["id"])

		res = e.Do("GET", "/prompt?draftsOnly=true", bob, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.JSONEq(t, "[]", string(res.Body))
	})
	t.Run("Favorited", func(t *testing.T) {
		res := e.Do("PATCH", "/prompt/"+shared["id"].(string), bob, map[string]any{"favorited": true})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		assert.Equal(t, true, res.Map(t)["favorited"])
		assert.Equal(t, false, e.Do("GET", "/prompt/"+shared["id"].(string), alice, nil).Map(t)["favorited"])
		assert.NotContains(t, e.Do("GET", "/prompt/"+shared["id"].(string), e.Viewer, nil).Map(t), "favorited")
	})
}
