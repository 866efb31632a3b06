package server_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessage_Create(t *testing.T) {
	e := newVersionEnv(t)
	version := e.mustVersion(t, nil)["id"].(string)

	t.Run("OK", func(t *testing.T) {
		id := uuid.NewString()
		m := mustCreate(t, e.testEnv, "/prompt-version-message", e.Editor, map[string]any{
			"id": id, "promptVersionId": version, "role": "system", "content": "Hello {{name}}", "markdownContent": "**Hello**",
		})
		assert.Equal(t, id, m["id"], "a client-supplied id is kept")
		assert.Equal(t, version, m["promptVersionId"])
		assert.Equal(t, float64(0), m["index"], "index defaults to 0")
		assert.Equal(t, "**Hello**", m["markdownContent"])
		assert.Nil(t, m["deletedAt"])

		v := e.Do("GET", "/prompt-version/"+version, e.Viewer, nil).Map(t)
		assert.Equal(t, "Hello {{name}}", v["content"], "the prompt is read from the system message at index 0")
		assert.Equal(t, "**Hello**", v["markdownContent"])

		res := e.Do("POST", "/prompt-version-message", e.Editor, map[string]any{"id": id, "promptVersionId": version, "role": "user", "content": "x"})
		assert.Equal(t, http.StatusConflict, res.Status, "an id in use: %s", res.Body)
	})

	body := func(fields map[string]any) map[string]any {
		return merged(map[string]any{"promptVersionId": version, "role": "user", "content": "x"}, fields)
	}
	invalid := func(name string, b any, paths ...string) apiCase {
		return invalidPost(name, "/prompt-version-message", e.Editor, b, paths...)
	}
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/prompt-version-message", body: body(nil), status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "POST", path: "/prompt-version-message", token: e.Viewer, body: body(nil), status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "POST", path: "/prompt-version-message", token: e.Key(canvas.RoleEditor, uuid.NewString()), body: body(nil),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "VersionNotFound", method: "POST", path: "/prompt-version-message", token: e.Editor, body: body(map[string]any{"promptVersionId": uuid.NewString()}),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		invalid("Role", body(map[string]any{"role": "robot"}), "/json/role"),
		invalid("Index", body(map[string]any{"index": -1}), "/json/index"),
		invalid("ID", body(map[string]any{"id": "x"}), "/json/id"),
		invalid("Missing", map[string]any{}, "/json/promptVersionId", "/json/role", "/json/content"),
	})
}

func TestMessage_List(t *testing.T) {
	e := newVersionEnv(t)
	version := e.mustVersion(t, nil)["id"].(string)
	for _, m := range []map[string]any{
		{"role": "assistant", "content": "third", "index": 2},
		{"role": "system", "content": "first", "index": 0},
		{"role": "user", "content": "second", "index": 1},
	} {
		m["promptVersionId"] = version
		mustCreate(t, e.testEnv, "/prompt-version-message", e.Editor, m)
	}

	t.Run("OK", func(t *testing.T) {
		res := e.Do("GET", "/prompt-version-message?promptVersionId="+version, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var list []canvas.Message
		res.JSON(t, &list)
		require.Len(t, list, 3)
		for i, want := range []string{"first", "second", "third"} {
			assert.Equal(t, i, list[i].Index, "ordered by index")
			assert.Equal(t, want, list[i].Content)
		}
		v := e.Do("GET", "/prompt-version/"+version, e.Viewer, nil).Map(t)
		assert.Equal(t, "first", v["content"])
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "GET", path: "/prompt-version-message?promptVersionId=" + version, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Forbidden", method: "GET", path: "/prompt-version-message?promptVersionId=" + version, token: e.Key(canvas.RoleViewer, uuid.NewString()),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "GET", path: "/prompt-version-message?promptVersionId=" + uuid.NewString(), token: e.Viewer,
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Missing", method: "GET", path: "/prompt-version-message", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/query/promptVersionId"}},
	})
}

func TestMessage_Update(t *testing.T) {
	e := newVersionEnv(t)
	version := e.mustVersion(t, nil)["id"].(string)
	m := mustCreate(t, e.testEnv, "/prompt-version-message", e.Editor, map[string]any{
		"promptVersionId": version, "role": "user", "content": "a", "index": 1,
	})
	path := "/prompt-version-message/" + m["id"].(string)

	t.Run("OK", func(t *testing.T) {
		res := e.Do("PATCH", path, e.Editor, map[string]any{"role": "system", "content": "b", "index": 0})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		got := res.Map(t)
		assert.Equal(t, "system", got["role"])
		assert.Equal(t, "b", got["content"])
		assert.Equal(t, float64(0), got["index"])
		assert.Equal(t, "b", e.Do("GET", "/prompt-version/"+version, e.Viewer, nil).Map(t)["content"], "now the prompt")
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "PATCH", path: path, body: map[string]any{"content": "x"}, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "PATCH", path: path, token: e.Viewer, body: map[string]any{"content": "x"}, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "NotFound", method: "PATCH", path: "/prompt-version-message/" + uuid.NewString(), token: e.Editor, body: map[string]any{"content": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Validation", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"role": "robot", "index": -1},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/json/role", "/json/index"}},
	})
}

func TestMessage_Delete(t *testing.T) {
	e := newVersionEnv(t)
	version := e.mustVersion(t, map[string]any{"message": map[string]any{"role": "system", "content": "p"}})
	id := version["messages"].([]any)[0].(map[string]any)["id"].(string)
	path := "/prompt-version-message/" + id
	runCases(t, e.testEnv, []apiCase{
		{name: "Viewer", method: "DELETE", path: path, token: e.Viewer, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "OK", method: "DELETE", path: path, token: e.Editor, status: http.StatusNoContent},
		{name: "DeleteAgain", method: "DELETE", path: path, token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "PatchVanished", method: "PATCH", path: path, token: e.Editor, body: map[string]any{"content": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
	})
	t.Run("Vanished", func(t *testing.T) {
		res := e.Do("GET", "/prompt-version-message?promptVersionId="+version["id"].(string), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.JSONEq(t, "[]", string(res.Body))
		v := e.Do("GET", "/prompt-version/"+version["id"].(string), e.Viewer, nil).Map(t)
		assert.Nil(t, v["content"], "no prompt once its message is deleted")
		assert.Nil(t, v["message"])
	})
}
