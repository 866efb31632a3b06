package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versionFields are the fields every version response carries, null or not.
var versionFields = []string{
	"id", "promptId", "title", "content", "markdownContent", "configuration", "variables", "promoted",
	"draft", "originVersionId", "workflowSpec", "graph", "isWorkflow", "createdBy", "updatedBy",
	"deletedBy", "createdAt", "updatedAt", "deletedAt", "message", "messages",
}

// versionEnv is a test env with a project and a canvas in it.
type versionEnv struct {
	*testEnv
	Project string
	Canvas  string
}

func newVersionEnv(t *testing.T) *versionEnv {
	t.Helper()
	e := newTestEnv(t)
	project := mustProjectID(t, e, "main")
	return &versionEnv{testEnv: e, Project: project, Canvas: mustCanvas(t, e, project, "c")["id"].(string)}
}

// mustVersion creates a version of the env's canvas; body adds fields.
func (e *versionEnv) mustVersion(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	return mustCreate(t, e.testEnv, "/prompt-version", e.Editor, merged(map[string]any{"promptId": e.Canvas}, body))
}

func TestVersion_Create(t *testing.T) {
	e := newVersionEnv(t)

	t.Run("OK", func(t *testing.T) {
		v := e.mustVersion(t, map[string]any{
			"configuration": map[string]any{"model": "echo", "type": "chat", "temperature": 0.5, "functions": []any{}},
			"variables":     []any{map[string]any{"name": "who", "type": "text", "required": true}},
			"message":       map[string]any{"role": "system", "content": "Hi {{who}}", "markdownContent": "*Hi*"},
		})
		for _, f := range versionFields {
			assert.Contains(t, v, f)
		}
		assert.Equal(t, e.Canvas, v["promptId"])
		assert.Equal(t, "Version 1", v["title"], "title defaults to Version N")
		assert.Equal(t, false, v["draft"], "draft defaults to false")
		assert.Equal(t, false, v["promoted"])
		assert.Nil(t, v["originVersionId"])
		assert.Equal(t, "Hi {{who}}", v["content"], "the prompt is the system message at index 0")
		assert.Equal(t, "*Hi*", v["markdownContent"])
		assert.Equal(t, map[string]any{"model": "echo", "type": "chat", "temperature": 0.5, "functions": []any{}}, v["configuration"])
		messages := v["messages"].([]any)
		require.Len(t, messages, 1)
		m := messages[0].(map[string]any)
		assert.Equal(t, float64(0), m["index"])
		assert.Equal(t, v["id"], m["promptVersionId"])
		assert.Equal(t, m, v["message"], "message is messages[0]")
	})
	t.Run("Minimal", func(t *testing.T) {
		v := e.mustVersion(t, map[string]any{"title": "Second", "draft": true})
		assert.Equal(t, "Second", v["title"])
		assert.Equal(t, true, v["draft"])
		assert.Nil(t, v["content"])
		assert.Nil(t, v["message"])
		assert.Equal(t, []any{}, v["messages"])
		assert.Equal(t, []any{}, v["variables"])
	})
	t.Run("MessageRoleDefaultsToSystem", func(t *testing.T) {
		v := e.mustVersion(t, map[string]any{"message": map[string]any{"content": "Plain {{x}}"}})
		m := v["message"].(map[string]any)
		assert.Equal(t, "system", m["role"])
		assert.Equal(t, float64(0), m["index"])
		assert.Equal(t, "Plain {{x}}", v["content"], "the prompt is read from it")
	})
	t.Run("Duplicate", func(t *testing.T) {
		origin := e.mustVersion(t, map[string]any{
			"title":         "Origin",
			"configuration": map[string]any{"model": "echo", "temperature": 0.9},
			"variables":     []any{map[string]any{"name": "x"}},
			"message":       map[string]any{"role": "system", "content": "Use {{x}}"},
		})
		dup := e.mustVersion(t, map[string]any{"originVersionId": origin["id"]})
		assert.Equal(t, origin["id"], dup["originVersionId"])
		assert.Equal(t, "Origin (copy)", dup["title"])
		assert.Equal(t, origin["configuration"], dup["configuration"])
		assert.Equal(t, origin["variables"], dup["variables"])
		assert.Equal(t, "Use {{x}}", dup["content"])
		dm := dup["messages"].([]any)[0].(map[string]any)
		om := origin["messages"].([]any)[0].(map[string]any)
		assert.NotEqual(t, om["id"], dm["id"], "messages are copied")
		assert.Equal(t, dup["id"], dm["promptVersionId"])

		own := e.mustVersion(t, map[string]any{"originVersionId": origin["id"], "configuration": map[string]any{"model": "other"}})
		assert.Equal(t, map[string]any{"model": "other"}, own["configuration"], "the caller's own content wins")
		assert.Equal(t, "Use {{x}}", own["content"], "the rest is copied")
	})
	t.Run("Workflow", func(t *testing.T) {
		// Specs are compiled when saved (workflow_test.go runs them); a
		// service without the workflow compiler refuses them.
		r := e.Do(http.MethodPost, "/prompt-version", e.Editor, map[string]any{"promptId": e.Canvas,
			"isWorkflow": true, "workflowSpec": map[string]any{"nodes": []any{}}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), `"/json/workflowSpec"`)
	})

	otherCanvas := mustCanvas(t, e.testEnv, e.Project, "other")["id"].(string)
	otherVersion := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": otherCanvas})["id"]
	body := func(fields map[string]any) map[string]any {
		return merged(map[string]any{"promptId": e.Canvas}, fields)
	}
	invalid := func(name string, b any, paths ...string) apiCase {
		return invalidPost(name, "/prompt-version", e.Editor, b, paths...)
	}
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/prompt-version", body: body(nil), status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "POST", path: "/prompt-version", token: e.Viewer, body: body(nil), status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "POST", path: "/prompt-version", token: e.Key(canvas.RoleEditor, uuid.NewString()), body: body(nil),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "CanvasNotFound", method: "POST", path: "/prompt-version", token: e.Editor, body: map[string]any{"promptId": uuid.NewString()},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OriginNotFound", method: "POST", path: "/prompt-version", token: e.Editor, body: body(map[string]any{"originVersionId": uuid.NewString()}),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		invalid("PromptIDMissing", map[string]any{}, "/json/promptId"),
		invalid("PromptID", map[string]any{"promptId": "x"}, "/json/promptId"),
		invalid("TitleTooLong", body(map[string]any{"title": strings.Repeat("t", 257)}), "/json/title"),
		invalid("VariableDuplicate", body(map[string]any{"variables": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}), "/json/variables/1/name"),
		invalid("VariableType", body(map[string]any{"variables": []any{map[string]any{"name": "a", "type": "image"}}}), "/json/variables/0/type"),
		invalid("MessageRole", body(map[string]any{"message": map[string]any{"role": "robot", "content": "x"}}), "/json/message/role"),
		invalid("WorkflowWithoutSpec", body(map[string]any{"isWorkflow": true}), "/json/workflowSpec"),
		invalid("OriginOfOtherCanvas", body(map[string]any{"originVersionId": otherVersion}), "/json/originVersionId"),
	})
}

func TestVersion_List(t *testing.T) {
	e := newVersionEnv(t)
	v1 := e.mustVersion(t, nil)["id"]
	v2 := e.mustVersion(t, nil)["id"]
	v3 := e.mustVersion(t, nil)["id"]
	require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/prompt-version/"+v2.(string), e.Editor, nil).Status)

	t.Run("OK", func(t *testing.T) {
		res := e.Do("GET", "/prompt-version?promptId="+e.Canvas, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var list []map[string]any
		res.JSON(t, &list)
		require.Len(t, list, 2, "a deleted version vanishes")
		assert.Equal(t, v1, list[0]["id"], "history order")
		assert.Equal(t, v3, list[1]["id"])
		for _, v := range list {
			for _, f := range versionFields {
				assert.Contains(t, v, f)
			}
		}
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/prompt-version?promptId=" + e.Canvas, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Forbidden", method: "GET", path: "/prompt-version?promptId=" + e.Canvas, token: e.Key(canvas.RoleViewer, uuid.NewString()),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "GET", path: "/prompt-version?promptId=" + uuid.NewString(), token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "PromptIDMissing", method: "GET", path: "/prompt-version", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/query/promptId"}},
		{name: "PromptIDMalformed", method: "GET", path: "/prompt-version?promptId=42", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/query/promptId"}},
	})
}

func TestVersion_Get(t *testing.T) {
	e := newVersionEnv(t)
	v := e.mustVersion(t, map[string]any{"message": map[string]any{"role": "system", "content": "p"}})
	id := v["id"].(string)

	t.Run("OK", func(t *testing.T) {
		res := e.Do("GET", "/prompt-version/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		assert.Equal(t, v, res.Map(t))
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/prompt-version/" + id, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Forbidden", method: "GET", path: "/prompt-version/" + id, token: e.Key(canvas.RoleViewer, uuid.NewString()),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "GET", path: "/prompt-version/" + uuid.NewString(), token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "MalformedID", method: "GET", path: "/prompt-version/x", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/path/id"}},
	})
}

func TestVersion_Update(t *testing.T) {
	e := newVersionEnv(t)
	v := e.mustVersion(t, map[string]any{
		"configuration": map[string]any{"model": "echo", "type": "chat", "temperature": 0.9, "maxTokens": 100},
		"message":       map[string]any{"role": "system", "content": "before"},
	})
	path := "/prompt-version/" + v["id"].(string)
	patch := func(t *testing.T, body any) map[string]any {
		t.Helper()
		res := e.Do("PATCH", path, e.Editor, body)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		return res.Map(t)
	}

	t.Run("MergePatch", func(t *testing.T) {
		got := patch(t, map[string]any{"configuration": map[string]any{"temperature": 0.2}})
		assert.Equal(t, map[string]any{"model": "echo", "type": "chat", "temperature": 0.2, "maxTokens": float64(100)}, got["configuration"],
			"only the temperature changes")
	})
	t.Run("MergePatchNullRemovesKey", func(t *testing.T) {
		got := patch(t, map[string]any{"configuration": map[string]any{"maxTokens": nil}})
		assert.Equal(t, map[string]any{"model": "echo", "type": "chat", "temperature": 0.2}, got["configuration"],
			"null removes a typed key, as RFC 7386 says")
	})
	t.Run("Fields", func(t *testing.T) {
		got := patch(t, map[string]any{"title": "Renamed", "draft": true, "content": "after", "variables": []any{map[string]any{"name": "n"}}})
		assert.Equal(t, "Renamed", got["title"])
		assert.Equal(t, true, got["draft"])
		assert.Equal(t, "after", got["content"], "content writes the prompt message")
		assert.Equal(t, "after", got["message"].(map[string]any)["content"])
		require.Len(t, got["variables"], 1)
	})
	t.Run("MessagesArray", func(t *testing.T) {
		got := patch(t, map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "u", "index": 1},
			map[string]any{"role": "system", "content": "s", "index": 0},
		}})
		messages := got["messages"].([]any)
		require.Len(t, messages, 2)
		assert.Equal(t, "s", messages[0].(map[string]any)["content"], "ordered by index")
		assert.Equal(t, "u", messages[1].(map[string]any)["content"])
		assert.Equal(t, "s", got["content"])
	})
	t.Run("MessagesObject", func(t *testing.T) {
		got := patch(t, map[string]any{"messages": map[string]any{"role": "system", "content": "only"}})
		messages := got["messages"].([]any)
		require.Len(t, messages, 1)
		assert.Equal(t, "only", got["content"])
	})
	t.Run("Promoted", func(t *testing.T) {
		got := patch(t, map[string]any{"configuration": map[string]any{"temperature": 0.1}, "promoted": true, "draft": false})
		assert.Equal(t, true, got["promoted"])
		res := e.Do("GET", "/environment/version?resourceType=prompt&resourceId="+e.Canvas+"&envName=production", e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		served := res.Map(t)
		assert.Equal(t, v["id"], served["id"], "production serves the promoted version")
		assert.Equal(t, true, served["promoted"])
		assert.Equal(t, 0.1, served["configuration"].(map[string]any)["temperature"])

		res = e.Do("DELETE", path, e.Editor, nil)
		assert.Equal(t, http.StatusConflict, res.Status, "a served version cannot be deleted")
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "PATCH", path: path, body: map[string]any{"title": "x"}, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "PATCH", path: path, token: e.Viewer, body: map[string]any{"title": "x"}, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "PATCH", path: path, token: e.Key(canvas.RoleEditor, uuid.NewString()), body: map[string]any{"title": "x"},
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "PATCH", path: "/prompt-version/" + uuid.NewString(), token: e.Editor, body: map[string]any{"title": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Validation", method: "PATCH", path: path, token: e.Editor,
			body:   map[string]any{"title": strings.Repeat("x", 257), "configuration": []any{}, "promoted": "yes"},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/title", "/json/configuration", "/json/promoted"}},
		{name: "MessageObjectRole", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"messages": map[string]any{"role": "robot", "content": "x"}},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/messages/role"}},
		{name: "MessageArrayIndex", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x", "index": -1}}},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/messages/0/index"}},
		{name: "VariableDuplicate", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"variables": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/variables/1/name"}},
	})
}

func TestVersion_Delete(t *testing.T) {
	e := newVersionEnv(t)
	id := e.mustVersion(t, nil)["id"].(string)
	runCases(t, e.testEnv, []apiCase{
		{name: "Viewer", method: "DELETE", path: "/prompt-version/" + id, token: e.Viewer, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "DELETE", path: "/prompt-version/" + uuid.NewString(), token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OK", method: "DELETE", path: "/prompt-version/" + id, token: e.Editor, status: http.StatusNoContent},
		{name: "Vanished", method: "GET", path: "/prompt-version/" + id, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "DeleteAgain", method: "DELETE", path: "/prompt-version/" + id, token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
	})
}
