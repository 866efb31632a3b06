package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withTestCaseService wires the test case service, listing generations
// from the same database.
func withTestCaseService(_ testing.TB, db *sqlite.DB, o *server.Options) {
	o.TestCases = testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
}

// testCaseFields are the fields every test case response carries.
var testCaseFields = []string{
	"id", "promptId", "title", "messages", "variables", "variablesRichContent", "files", "expectedOutput",
	"evaluator", "answers", "promptApplicationId", "metadata", "createdAt", "updatedAt", "deletedAt", "tags",
}

// tcEnv is a server with test cases, a project and a canvas in it.
type tcEnv struct {
	*testEnv
	project, other string // project ids; other holds no canvas of the test
	canvasID       string
}

func newTCEnv(t *testing.T) *tcEnv {
	t.Helper()
	e := newTestEnv(t, withTestCaseService)
	te := &tcEnv{testEnv: e, project: mustProjectID(t, e, "main"), other: mustProjectID(t, e, "other")}
	te.canvasID = mustCanvas(t, e, te.project, "c")["id"].(string)
	return te
}

// otherWorkspaceKey mints an admin key of a second workspace.
func (e *tcEnv) otherWorkspaceKey(t *testing.T) string {
	t.Helper()
	ws := &canvas.Workspace{Name: "elsewhere-" + uuid.NewString()[:8]}
	require.NoError(t, e.Store.CreateWorkspace(t.Context(), ws))
	return e.KeyIn(ws.ID, canvas.RoleAdmin)
}

// mustTestCase creates a test case of canvasID with the given fields.
func mustTestCase(t *testing.T, e *tcEnv, canvasID string, fields map[string]any) map[string]any {
	t.Helper()
	return mustCreate(t, e.testEnv, "/test-case", e.Editor, merged(map[string]any{"promptId": canvasID, "title": "t"}, fields))
}

// mustTag creates a tag of canvasID named name.
func mustTag(t *testing.T, e *tcEnv, canvasID, name string) map[string]any {
	t.Helper()
	return mustCreate(t, e.testEnv, "/test-case-tags", e.Editor, map[string]any{"promptId": canvasID, "name": name, "color": "#00ff00"})
}

// tagNames returns the names of a test case's tags, in order.
func tagNames(tc map[string]any) []string {
	var out []string
	for _, t := range tc["tags"].([]any) {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

func TestTestCase_Create(t *testing.T) {
	e := newTCEnv(t)

	t.Run("OK", func(t *testing.T) {
		body := map[string]any{
			"promptId": e.canvasID, "title": "sum",
			"messages":             []any{map[string]any{"role": "user", "content": "2+2?"}},
			"variables":            map[string]any{"x": "2", "n": 3.0},
			"variablesRichContent": map[string]any{"doc": map[string]any{"type": "paragraph"}},
			"files": []any{map[string]any{"index": 0.0, "name": "a.png", "mimeType": "image/png", "vaultUrl": "vault://" + uuid.NewString(),
				"variableName": "img", "url": "https://example.com/a.png"}},
			"expectedOutput":      "4",
			"evaluator":           map[string]any{"type": "regex", "pattern": "^4$"},
			"answers":             map[string]any{"q1": map[string]any{"good": []any{"4"}, "bad": []any{"5"}, "evals": []any{map[string]any{"score": 1.0}}}},
			"promptApplicationId": uuid.NewString(),
			"metadata":            map[string]any{"source": "manual"},
		}
		tc := mustCreate(t, e.testEnv, "/test-case", e.Editor, body)
		for _, f := range testCaseFields {
			assert.Contains(t, tc, f)
		}
		for k, v := range body {
			assert.Equal(t, v, tc[k], k)
		}
		assert.Equal(t, []any{}, tc["tags"])
		assert.Nil(t, tc["deletedAt"])
		assert.NotContains(t, tc, "generations")

		res := e.Do("GET", "/test-case/"+tc["id"].(string), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		assert.Equal(t, tc, res.Map(t), "a read returns what the create answered")
	})
	t.Run("Defaults", func(t *testing.T) {
		tc := mustCreate(t, e.testEnv, "/test-case", e.Editor, map[string]any{"promptId": e.canvasID,
			"answers": map[string]any{"q": map[string]any{"good": []any{"x"}}}})
		for _, f := range []string{"messages", "variables", "variablesRichContent", "files", "expectedOutput",
			"evaluator", "promptApplicationId", "metadata"} {
			assert.Nil(t, tc[f], f)
		}
		assert.Equal(t, "", tc["title"])
		assert.Equal(t, map[string]any{"q": map[string]any{"good": []any{"x"}, "bad": []any{}, "evals": []any{}}}, tc["answers"],
			"missing answer arrays read as empty")
	})
	t.Run("JSONSchemaEvaluator", func(t *testing.T) {
		tc := mustTestCase(t, e, e.canvasID, map[string]any{"evaluator": map[string]any{"type": "json-schema",
			"schema": map[string]any{"type": "object", "required": []any{"answer"}}}})
		assert.Equal(t, "json-schema", tc["evaluator"].(map[string]any)["type"])
		res := e.Do("POST", "/test-case", e.Editor, map[string]any{"promptId": e.canvasID,
			"evaluator": map[string]any{"type": "json-schema", "schema": map[string]any{"type": "nope"}}})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "body: %s", res.Body)
		b := readError(t, res)
		require.NotEmpty(t, b.Details)
		for _, d := range b.Details {
			assert.True(t, strings.HasPrefix(d.Path, "/json/evaluator/schema"), d.Path)
		}
	})

	valid := map[string]any{"promptId": e.canvasID, "title": "t"}
	with := func(k string, v any) map[string]any { return merged(valid, map[string]any{k: v}) }
	invalid := func(name string, body any, paths ...string) apiCase {
		return invalidPost(name, "/test-case", e.Editor, body, paths...)
	}
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/test-case", body: valid, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "POST", path: "/test-case", token: e.Viewer, body: valid, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "POST", path: "/test-case", token: e.Key(canvas.RoleEditor, e.other), body: valid,
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "CanvasNotFound", method: "POST", path: "/test-case", token: e.Editor, body: with("promptId", uuid.NewString()),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OtherWorkspaceCanvas", method: "POST", path: "/test-case", token: e.otherWorkspaceKey(t), body: valid,
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "MalformedJSON", method: "POST", path: "/test-case", token: e.Editor, body: "{", status: http.StatusBadRequest, code: canvas.EBADREQUEST},
		invalid("PromptIDMissing", map[string]any{"title": "t"}, "/json/promptId"),
		invalid("PromptIDMalformed", with("promptId", "nope"), "/json/promptId"),
		invalid("TitleTooLong", with("title", strings.Repeat("é", 257)), "/json/title"),
		invalid("MessageRole", with("messages", []any{map[string]any{"role": "robot", "content": "x"}}), "/json/messages/0/role"),
		invalid("MessageContentMissing", with("messages", []any{map[string]any{"role": "user"}}), "/json/messages/0/content"),
		invalid("FileIndex", with("files", []any{map[string]any{"index": -1}}), "/json/files/0/index"),
		invalid("FileVaultURL", with("files", []any{map[string]any{"index": 0, "vaultUrl": "s3://x"}}), "/json/files/0/vaultUrl"),
		invalid("FileURL", with("files", []any{map[string]any{"index": 0, "url": "ftp://x"}}), "/json/files/0/url"),
		invalid("EvaluatorType", with("evaluator", map[string]any{"type": "fuzzy"}), "/json/evaluator/type"),
		invalid("RegexMissingPattern", with("evaluator", map[string]any{"type": "regex"}), "/json/evaluator/pattern"),
		invalid("RegexBad", with("evaluator", map[string]any{"type": "regex", "pattern": "(a"}), "/json/evaluator/pattern"),
		invalid("PatternOnExact", with("evaluator", map[string]any{"type": "exact", "pattern": "a"}), "/json/evaluator/pattern"),
		invalid("SchemaMissing", with("evaluator", map[string]any{"type": "json-schema"}), "/json/evaluator/schema"),
		invalid("ApplicationID", with("promptApplicationId", "nope"), "/json/promptApplicationId"),
		invalid("MetadataSource", with("metadata", map[string]any{"source": 1}), "/json/metadata/source"),
		invalid("WrongTypes", merged(valid, map[string]any{"variables": []any{}, "expectedOutput": 3}), "/json/variables", "/json/expectedOutput"),
	})
}

func TestTestCase_Get(t *testing.T) {
	e := newTCEnv(t)
	id := mustTestCase(t, e, e.canvasID, nil)["id"].(string)
	path := "/test-case/" + id
	runCases(t, e.testEnv, []apiCase{
		{name: "OK", method: "GET", path: path, token: e.Viewer, status: http.StatusOK},
		{name: "Unauthorized", method: "GET", path: path, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "NotFound", method: "GET", path: "/test-case/" + uuid.NewString(), token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OtherWorkspace", method: "GET", path: path, token: e.otherWorkspaceKey(t), status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Forbidden", method: "GET", path: path, token: e.Key(canvas.RoleViewer, e.other), status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "MalformedID", method: "GET", path: "/test-case/nope", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/path/id"}},
	})
	t.Run("DeletedCanvas", func(t *testing.T) {
		c := mustCanvas(t, e.testEnv, e.project, "doomed")["id"].(string)
		tc := mustTestCase(t, e, c, nil)["id"].(string)
		require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/prompt/"+c, e.Editor, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/test-case/"+tc, e.Viewer, nil).Status)
	})
}

func TestTestCase_Update(t *testing.T) {
	e := newTCEnv(t)
	tc := mustTestCase(t, e, e.canvasID, map[string]any{"expectedOutput": "4", "variables": map[string]any{"x": "1"},
		"metadata": map[string]any{"source": "import"}})
	path := "/test-case/" + tc["id"].(string)

	t.Run("Partial", func(t *testing.T) {
		res := e.Do("PATCH", path, e.Editor, map[string]any{"title": "renamed", "evaluator": map[string]any{"type": "contains"}})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		got := res.Map(t)
		assert.Equal(t, "renamed", got["title"])
		assert.Equal(t, map[string]any{"type": "contains"}, got["evaluator"])
		assert.Equal(t, "4", got["expectedOutput"], "fields not sent are left alone")
		assert.Equal(t, map[string]any{"x": "1"}, got["variables"])
		assert.Equal(t, tc["createdAt"], got["createdAt"])
	})
	t.Run("NullClears", func(t *testing.T) {
		res := e.Do("PATCH", path, e.Editor, map[string]any{"expectedOutput": nil, "metadata": nil, "variables": nil,
			"messages": []any{map[string]any{"role": "assistant", "content": "hi"}}})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		got := res.Map(t)
		assert.Nil(t, got["expectedOutput"])
		assert.Nil(t, got["metadata"])
		assert.Nil(t, got["variables"])
		assert.Equal(t, []any{map[string]any{"role": "assistant", "content": "hi"}}, got["messages"])
		assert.Equal(t, "renamed", got["title"])
	})
	patch := func(name, token string, body any, status int, code string, paths ...string) apiCase {
		return apiCase{name: name, method: "PATCH", path: path, token: token, body: body, status: status, code: code, paths: paths}
	}
	runCases(t, e.testEnv, []apiCase{
		patch("Unauthorized", "", map[string]any{"title": "x"}, http.StatusUnauthorized, canvas.EUNAUTHORIZED),
		patch("Viewer", e.Viewer, map[string]any{"title": "x"}, http.StatusForbidden, canvas.EFORBIDDEN),
		patch("RestrictedKey", e.Key(canvas.RoleEditor, e.other), map[string]any{"title": "x"}, http.StatusForbidden, canvas.EFORBIDDEN),
		patch("OtherWorkspace", e.otherWorkspaceKey(t), map[string]any{"title": "x"}, http.StatusNotFound, canvas.ENOTFOUND),
		patch("TitleTooLong", e.Editor, map[string]any{"title": strings.Repeat("a", 257)}, http.StatusUnprocessableEntity, canvas.EINVALID, "/json/title"),
		patch("RegexBad", e.Editor, map[string]any{"evaluator": map[string]any{"type": "regex", "pattern": "[a"}},
			http.StatusUnprocessableEntity, canvas.EINVALID, "/json/evaluator/pattern"),
		patch("MessageRole", e.Editor, map[string]any{"messages": []any{map[string]any{"role": "x", "content": "y"}}},
			http.StatusUnprocessableEntity, canvas.EINVALID, "/json/messages/0/role"),
		{name: "NotFound", method: "PATCH", path: "/test-case/" + uuid.NewString(), token: e.Editor, body: map[string]any{"title": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "MalformedID", method: "PATCH", path: "/test-case/nope", token: e.Editor, body: map[string]any{"title": "x"},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/path/id"}},
	})
}

func TestTestCase_Delete(t *testing.T) {
	e := newTCEnv(t)
	keep := mustTestCase(t, e, e.canvasID, map[string]any{"title": "keep"})["id"].(string)
	gone := mustTestCase(t, e, e.canvasID, map[string]any{"title": "gone"})["id"].(string)
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "DELETE", path: "/test-case/" + gone, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "DELETE", path: "/test-case/" + gone, token: e.Viewer, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "MalformedID", method: "DELETE", path: "/test-case/nope", token: e.Editor, status: http.StatusUnprocessableEntity, code: canvas.EINVALID},
		{name: "OK", method: "DELETE", path: "/test-case/" + gone, token: e.Editor, status: http.StatusNoContent},
		{name: "Again", method: "DELETE", path: "/test-case/" + gone, token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "ReadAfter", method: "GET", path: "/test-case/" + gone, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
	})
	t.Run("VanishesFromList", func(t *testing.T) {
		var list []map[string]any
		res := e.Do("GET", "/test-case?promptId="+e.canvasID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		res.JSON(t, &list)
		require.Len(t, list, 1)
		assert.Equal(t, keep, list[0]["id"])
	})
}

func TestTestCase_List(t *testing.T) {
	e := newTCEnv(t)
	a := mustTestCase(t, e, e.canvasID, map[string]any{"title": "a"})["id"].(string)
	b := mustTestCase(t, e, e.canvasID, map[string]any{"title": "b"})["id"].(string)
	otherCanvas := mustCanvas(t, e.testEnv, e.project, "other")["id"].(string)
	mustTestCase(t, e, otherCanvas, nil)
	list := func(t *testing.T, query string) []map[string]any {
		t.Helper()
		res := e.Do("GET", "/test-case?"+query, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var out []map[string]any
		res.JSON(t, &out)
		return out
	}

	t.Run("OK", func(t *testing.T) {
		got := list(t, "promptId="+e.canvasID)
		require.Len(t, got, 2)
		assert.Equal(t, a, got[0]["id"], "oldest first")
		assert.Equal(t, b, got[1]["id"])
		for _, tc := range got {
			assert.NotContains(t, tc, "generations", "generations only when asked for")
			assert.Equal(t, []any{}, tc["tags"])
		}
	})
	t.Run("IncludeGenerations", func(t *testing.T) {
		for _, q := range []string{"", "&promptVersionIds=" + uuid.NewString() + "&promptVersionIds=" + uuid.NewString()} {
			got := list(t, "promptId="+e.canvasID+"&includeGenerations=true"+q)
			require.Len(t, got, 2, "promptVersionIds never removes a test case")
			for _, tc := range got {
				assert.Equal(t, []any{}, tc["generations"])
			}
		}
		for _, tc := range list(t, "promptId="+e.canvasID+"&includeGenerations=false") {
			assert.NotContains(t, tc, "generations")
		}
	})
	t.Run("Empty", func(t *testing.T) {
		c := mustCanvas(t, e.testEnv, e.project, "empty")["id"].(string)
		assert.Empty(t, list(t, "promptId="+c))
	})
	bad := func(name, query string, paths ...string) apiCase {
		return apiCase{name: name, method: "GET", path: "/test-case" + query, token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: paths}
	}
	runCases(t, e.testEnv, []apiCase{
		bad("PromptIDMissing", "", "/query/promptId"),
		bad("PromptIDMalformed", "?promptId=nope", "/query/promptId"),
		bad("VersionIDMalformed", "?promptId="+e.canvasID+"&promptVersionIds=nope", "/query/promptVersionIds"),
		bad("IncludeGenerations", "?promptId="+e.canvasID+"&includeGenerations=maybe", "/query/includeGenerations"),
		{name: "Unauthorized", method: "GET", path: "/test-case?promptId=" + e.canvasID, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "CanvasNotFound", method: "GET", path: "/test-case?promptId=" + uuid.NewString(), token: e.Viewer,
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OtherWorkspace", method: "GET", path: "/test-case?promptId=" + e.canvasID, token: e.otherWorkspaceKey(t),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Forbidden", method: "GET", path: "/test-case?promptId=" + e.canvasID, token: e.Key(canvas.RoleViewer, e.other),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
	})
}

func TestTestCaseTag_Create(t *testing.T) {
	e := newTCEnv(t)
	t.Run("OK", func(t *testing.T) {
		tag := mustCreate(t, e.testEnv, "/test-case-tags", e.Editor, map[string]any{"promptId": e.canvasID,
			"name": strings.Repeat("n", 256), "color": strings.Repeat("c", 50)})
		assert.Equal(t, e.canvasID, tag["promptId"])
		assert.Equal(t, e.Workspace.ID, tag["workspaceId"])
		assert.Contains(t, tag, "agentId")
		assert.Nil(t, tag["agentId"], "agentId is always null")
		assert.Nil(t, tag["deletedAt"])
		res := e.Do("GET", "/test-case-tags/"+tag["id"].(string), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		assert.Equal(t, tag, res.Map(t))
	})
	valid := map[string]any{"promptId": e.canvasID, "name": "smoke", "color": "red"}
	with := func(k string, v any) map[string]any { return merged(valid, map[string]any{k: v}) }
	invalid := func(name string, body any, paths ...string) apiCase {
		return invalidPost(name, "/test-case-tags", e.Editor, body, paths...)
	}
	runCases(t, e.testEnv, []apiCase{
		{name: "Unauthorized", method: "POST", path: "/test-case-tags", body: valid, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "Viewer", method: "POST", path: "/test-case-tags", token: e.Viewer, body: valid, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "RestrictedKey", method: "POST", path: "/test-case-tags", token: e.Key(canvas.RoleEditor, e.other), body: valid,
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "CanvasNotFound", method: "POST", path: "/test-case-tags", token: e.Editor, body: with("promptId", uuid.NewString()),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "OtherWorkspaceCanvas", method: "POST", path: "/test-case-tags", token: e.otherWorkspaceKey(t), body: valid,
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		invalid("NameTooLong", with("name", strings.Repeat("é", 257)), "/json/name"),
		invalid("ColorTooLong", with("color", strings.Repeat("c", 51)), "/json/color"),
		invalid("NameMissing", map[string]any{"promptId": e.canvasID}, "/json/name"),
		invalid("NameBlank", with("name", "  "), "/json/name"),
		invalid("PromptIDMissing", map[string]any{"name": "x"}, "/json/promptId"),
		invalid("PromptIDMalformed", with("promptId", "nope"), "/json/promptId"),
	})
}

func TestTestCaseTag_Update(t *testing.T) {
	e := newTCEnv(t)
	tag := mustTag(t, e, e.canvasID, "smoke")
	path := "/test-case-tags/" + tag["id"].(string)
	target := mustCanvas(t, e.testEnv, e.project, "target")["id"].(string)

	t.Run("Partial", func(t *testing.T) {
		res := e.Do("PATCH", path, e.Editor, map[string]any{"color": "blue"})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		got := res.Map(t)
		assert.Equal(t, "blue", got["color"])
		assert.Equal(t, "smoke", got["name"], "fields not sent are left alone")
		assert.Equal(t, e.canvasID, got["promptId"])
	})
	t.Run("MoveAssignedConflict", func(t *testing.T) {
		tc := mustTestCase(t, e, e.canvasID, nil)["id"].(string)
		body := map[string]any{"testCaseIds": []string{tc}, "tagIds": []string{tag["id"].(string)}}
		require.Equal(t, http.StatusOK, e.Do("POST", "/test-case/bulk-add-tags", e.Editor, body).Status)
		res := e.Do("PATCH", path, e.Editor, map[string]any{"promptId": target})
		require.Equal(t, http.StatusConflict, res.Status, "body: %s", res.Body)
		assert.Equal(t, canvas.ECONFLICT, res.Code(t))
		require.Equal(t, http.StatusOK, e.Do("POST", "/test-case/bulk-remove-tags", e.Editor, body).Status)
		res = e.Do("PATCH", path, e.Editor, map[string]any{"promptId": target, "name": "moved"})
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		assert.Equal(t, target, res.Map(t)["promptId"])
		assert.Equal(t, "moved", res.Map(t)["name"])
	})
	patch := func(name, token string, body any, status int, code string, paths ...string) apiCase {
		return apiCase{name: name, method: "PATCH", path: path, token: token, body: body, status: status, code: code, paths: paths}
	}
	runCases(t, e.testEnv, []apiCase{
		patch("Unauthorized", "", map[string]any{"name": "x"}, http.StatusUnauthorized, canvas.EUNAUTHORIZED),
		patch("Viewer", e.Viewer, map[string]any{"name": "x"}, http.StatusForbidden, canvas.EFORBIDDEN),
		patch("NameTooLong", e.Editor, map[string]any{"name": strings.Repeat("a", 257)}, http.StatusUnprocessableEntity, canvas.EINVALID, "/json/name"),
		patch("ColorTooLong", e.Editor, map[string]any{"color": strings.Repeat("a", 51)}, http.StatusUnprocessableEntity, canvas.EINVALID, "/json/color"),
		patch("MoveToUnknownCanvas", e.Editor, map[string]any{"promptId": uuid.NewString()}, http.StatusNotFound, canvas.ENOTFOUND),
		patch("OtherWorkspace", e.otherWorkspaceKey(t), map[string]any{"name": "x"}, http.StatusNotFound, canvas.ENOTFOUND),
		{name: "NotFound", method: "PATCH", path: "/test-case-tags/" + uuid.NewString(), token: e.Editor, body: map[string]any{"name": "x"},
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "MalformedID", method: "PATCH", path: "/test-case-tags/nope", token: e.Editor, body: map[string]any{"name": "x"},
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/path/id"}},
	})
}

func TestTestCaseTag_List(t *testing.T) {
	e := newTCEnv(t)
	mustTag(t, e, e.canvasID, "zeta")
	mustTag(t, e, e.canvasID, "alpha")
	mustTag(t, e, mustCanvas(t, e.testEnv, e.project, "other")["id"].(string), "beta")
	t.Run("OK", func(t *testing.T) {
		res := e.Do("GET", "/test-case-tags?promptId="+e.canvasID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		var tags []map[string]any
		res.JSON(t, &tags)
		require.Len(t, tags, 2, "only the canvas' tags")
		assert.Equal(t, "alpha", tags[0]["name"])
		assert.Equal(t, "zeta", tags[1]["name"])
	})
	runCases(t, e.testEnv, []apiCase{
		{name: "PromptIDMissing", method: "GET", path: "/test-case-tags", token: e.Viewer,
			status: http.StatusUnprocessableEntity, code: canvas.EINVALID, paths: []string{"/query/promptId"}},
		{name: "Unauthorized", method: "GET", path: "/test-case-tags?promptId=" + e.canvasID, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
		{name: "OtherWorkspace", method: "GET", path: "/test-case-tags?promptId=" + e.canvasID, token: e.otherWorkspaceKey(t),
			status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "Forbidden", method: "GET", path: "/test-case-tags?promptId=" + e.canvasID, token: e.Key(canvas.RoleViewer, e.other),
			status: http.StatusForbidden, code: canvas.EFORBIDDEN},
	})
}

func TestTestCaseTag_Delete(t *testing.T) {
	e := newTCEnv(t)
	tag := mustTag(t, e, e.canvasID, "smoke")["id"].(string)
	tc := mustTestCase(t, e, e.canvasID, nil)["id"].(string)
	res := e.Do("POST", "/test-case/bulk-add-tags", e.Editor, map[string]any{"testCaseIds": []string{tc}, "tagIds": []string{tag}})
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	runCases(t, e.testEnv, []apiCase{
		{name: "Viewer", method: "DELETE", path: "/test-case-tags/" + tag, token: e.Viewer, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
		{name: "MalformedID", method: "DELETE", path: "/test-case-tags/nope", token: e.Editor, status: http.StatusUnprocessableEntity, code: canvas.EINVALID},
		{name: "OK", method: "DELETE", path: "/test-case-tags/" + tag, token: e.Editor, status: http.StatusNoContent},
		{name: "Again", method: "DELETE", path: "/test-case-tags/" + tag, token: e.Editor, status: http.StatusNotFound, code: canvas.ENOTFOUND},
		{name: "ReadAfter", method: "GET", path: "/test-case-tags/" + tag, token: e.Viewer, status: http.StatusNotFound, code: canvas.ENOTFOUND},
	})
	t.Run("AssignmentsRemoved", func(t *testing.T) {
		res := e.Do("GET", "/test-case/"+tc, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.Equal(t, []any{}, res.Map(t)["tags"])
	})
}

func TestTestCase_BulkTags(t *testing.T) {
	e := newTCEnv(t)
	a := mustTestCase(t, e, e.canvasID, map[string]any{"title": "a"})["id"].(string)
	b := mustTestCase(t, e, e.canvasID, map[string]any{"title": "b"})["id"].(string)
	zeta := mustTag(t, e, e.canvasID, "zeta")["id"].(string)
	alpha := mustTag(t, e, e.canvasID, "alpha")["id"].(string)
	foreign := mustTag(t, e, mustCanvas(t, e.testEnv, e.project, "other")["id"].(string), "foreign")["id"].(string)
	bulk := func(t *testing.T, op string, body map[string]any) map[string]any {
		t.Helper()
		res := e.Do("POST", "/test-case/"+op, e.Editor, body)
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		return res.Map(t)
	}
	readTags := func(t *testing.T, id string) []string {
		t.Helper()
		res := e.Do("GET", "/test-case/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		return tagNames(res.Map(t))
	}

	t.Run("AddIdempotent", func(t *testing.T) {
		got := bulk(t, "bulk-add-tags", map[string]any{"testCaseIds": []string{a}, "tagIds": []string{zeta}})
		assert.Equal(t, map[string]any{"added": 1.0, "skipped": 0.0}, got)
		body := map[string]any{"testCaseIds": []string{a, b, a}, "tagIds": []string{zeta, alpha, zeta}}
		got = bulk(t, "bulk-add-tags", body)
		assert.Equal(t, map[string]any{"added": 3.0, "skipped": 1.0}, got, "repeated ids count once; existing pairs are skipped")
		got = bulk(t, "bulk-add-tags", body)
		assert.Equal(t, map[string]any{"added": 0.0, "skipped": 4.0}, got, "repeating the call changes nothing")
		assert.Equal(t, []string{"alpha", "zeta"}, readTags(t, a), "tags ordered by name")
		assert.Equal(t, []string{"alpha", "zeta"}, readTags(t, b))
		res := e.Do("GET", "/test-case?promptId="+e.canvasID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		var list []map[string]any
		res.JSON(t, &list)
		require.Len(t, list, 2)
		assert.Equal(t, []string{"alpha", "zeta"}, tagNames(list[0]), "lists carry tags too")
	})
	t.Run("Remove", func(t *testing.T) {
		got := bulk(t, "bulk-remove-tags", map[string]any{"testCaseIds": []string{b}, "tagIds": []string{zeta, foreign}})
		assert.Equal(t, map[string]any{"removed": 1.0, "skipped": 1.0}, got)
		assert.Equal(t, []string{"alpha"}, readTags(t, b))
		got = bulk(t, "bulk-remove-tags", map[string]any{"testCaseIds": []string{b}, "tagIds": []string{zeta}})
		assert.Equal(t, map[string]any{"removed": 0.0, "skipped": 1.0}, got)
	})
	t.Run("UnknownWritesNothing", func(t *testing.T) {
		res := e.Do("POST", "/test-case/bulk-add-tags", e.Editor,
			map[string]any{"testCaseIds": []string{b, uuid.NewString()}, "tagIds": []string{zeta}})
		require.Equal(t, http.StatusNotFound, res.Status, "body: %s", res.Body)
		assert.Equal(t, []string{"alpha"}, readTags(t, b), "nothing was written")
	})
	t.Run("DeletedTestCase", func(t *testing.T) {
		gone := mustTestCase(t, e, e.canvasID, nil)["id"].(string)
		require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/test-case/"+gone, e.Editor, nil).Status)
		res := e.Do("POST", "/test-case/bulk-add-tags", e.Editor, map[string]any{"testCaseIds": []string{gone}, "tagIds": []string{zeta}})
		assert.Equal(t, http.StatusNotFound, res.Status)
	})

	valid := map[string]any{"testCaseIds": []string{a}, "tagIds": []string{alpha}}
	var cases []apiCase
	for _, op := range []string{"bulk-add-tags", "bulk-remove-tags"} {
		path := "/test-case/" + op
		cases = append(cases,
			apiCase{name: op + "/Unauthorized", method: "POST", path: path, body: valid, status: http.StatusUnauthorized, code: canvas.EUNAUTHORIZED},
			apiCase{name: op + "/Viewer", method: "POST", path: path, token: e.Viewer, body: valid, status: http.StatusForbidden, code: canvas.EFORBIDDEN},
			apiCase{name: op + "/RestrictedKey", method: "POST", path: path, token: e.Key(canvas.RoleEditor, e.other), body: valid,
				status: http.StatusForbidden, code: canvas.EFORBIDDEN},
			apiCase{name: op + "/OtherWorkspace", method: "POST", path: path, token: e.otherWorkspaceKey(t), body: valid,
				status: http.StatusNotFound, code: canvas.ENOTFOUND},
			apiCase{name: op + "/UnknownTag", method: "POST", path: path, token: e.Editor,
				body: map[string]any{"testCaseIds": []string{a}, "tagIds": []string{uuid.NewString()}}, status: http.StatusNotFound, code: canvas.ENOTFOUND},
			invalidPost(op+"/MalformedIDs", path, e.Editor, map[string]any{"testCaseIds": []string{"nope"}, "tagIds": []string{alpha, "x"}},
				"/json/testCaseIds/0", "/json/tagIds/1"),
			invalidPost(op+"/Empty", path, e.Editor, map[string]any{"testCaseIds": []string{}, "tagIds": []string{alpha}}, "/json/testCaseIds"),
			invalidPost(op+"/Missing", path, e.Editor, map[string]any{"tagIds": []string{alpha}}, "/json/testCaseIds"),
		)
	}
	cases = append(cases, invalidPost("AcrossCanvases", "/test-case/bulk-add-tags", e.Editor,
		map[string]any{"testCaseIds": []string{a}, "tagIds": []string{alpha, foreign}}, "/json/tagIds/1"))
	runCases(t, e.testEnv, cases)
}
