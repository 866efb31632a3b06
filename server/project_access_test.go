package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// ids returns the id field of every item of a JSON array body, or of the
// data array of a page.
func ids(t *testing.T, r *testResponse) []string {
	t.Helper()
	var items []map[string]any
	if len(r.Body) > 0 && r.Body[0] == '{' {
		var page struct {
			Data []map[string]any `json:"data"`
		}
		r.JSON(t, &page)
		items = page.Data
	} else {
		r.JSON(t, &items)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// requireForbidden checks a 403 FORBIDDEN answer.
func requireForbidden(t *testing.T, r *testResponse) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, canvas.EFORBIDDEN, r.Code(t))
}

// TestProjectAccess_Applications checks that a key limited to project P2
// can neither see nor manage the applications of a canvas of P1, and
// neither create nor keep one without a canvas.
func TestProjectAccess_Applications(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := e.Key(canvas.RoleAdmin, w.P2)
	otherViewer := e.Key(canvas.RoleViewer, w.P2)
	mine := e.Key(canvas.RoleAdmin, w.P1)
	appPath := "/applications/" + w.App
	otherCanvas := mustCanvas(t, e.testEnv, w.P2, "Other")["id"].(string)

	t.Run("List", func(t *testing.T) {
		assert.NotContains(t, ids(t, e.Do(http.MethodGet, "/applications", otherViewer, nil)), w.App)
		assert.Contains(t, ids(t, e.Do(http.MethodGet, "/applications", mine, nil)), w.App)
		assert.Contains(t, ids(t, e.Do(http.MethodGet, "/applications", e.Viewer, nil)), w.App)
	})
	t.Run("Get", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodGet, appPath, otherViewer, nil))
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, appPath, mine, nil).Status)
	})
	t.Run("Update", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodPatch, appPath, other, map[string]any{"events": map[string]any{"url": "https://evil.example/hook"}}))
		requireForbidden(t, e.Do(http.MethodPatch, appPath, other, map[string]any{"promptId": otherCanvas}))
		got := e.Do(http.MethodGet, appPath, e.Admin, nil).Map(t)
		assert.Equal(t, w.Hook.URL, got["events"].(map[string]any)["url"], "the URL is unchanged")
		assert.Equal(t, w.Canvas, got["promptId"])
	})
	t.Run("RotateSecret", func(t *testing.T) {
		r := e.Do(http.MethodPost, appPath+"/events/rotate-secret", other, nil)
		requireForbidden(t, r)
		assert.NotContains(t, string(r.Body), "whsec_")
	})
	t.Run("TestRequest", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodPost, appPath+"/events/test", other, nil))
	})
	t.Run("Delete", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodDelete, appPath, other, nil))
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, appPath, e.Admin, nil).Status, "the application remains")
	})
	t.Run("OwnProject", func(t *testing.T) {
		app := mustCreate(t, e.testEnv, "/applications", other, map[string]any{"name": "mine", "promptId": otherCanvas})
		path := "/applications/" + app["id"].(string)
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, path, otherViewer, nil).Status)
		assert.Equal(t, []string{app["id"].(string)}, ids(t, e.Do(http.MethodGet, "/applications", otherViewer, nil)))
		requireForbidden(t, e.Do(http.MethodPatch, path, other, map[string]any{"promptId": nil}))
		requireForbidden(t, e.Do(http.MethodPatch, path, other, map[string]any{"promptId": w.Canvas}))
		assert.Equal(t, http.StatusOK, e.Do(http.MethodPatch, path, other, map[string]any{"name": "renamed"}).Status)
	})
	t.Run("WithoutCanvas", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodPost, "/applications", other, map[string]any{"name": "loose"}))
		loose, _ := mustApplication(t, e.testEnv, map[string]any{"name": "loose"})
		path := "/applications/" + loose["id"].(string)
		requireForbidden(t, e.Do(http.MethodGet, path, otherViewer, nil))
		requireForbidden(t, e.Do(http.MethodDelete, path, other, nil))
		assert.NotContains(t, ids(t, e.Do(http.MethodGet, "/applications", otherViewer, nil)), loose["id"])
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, path, e.Viewer, nil).Status, "unrestricted keys reach it")
	})
}

// TestProjectAccess_Deliveries checks that a key limited to project P2
// neither lists nor reads nor redelivers the notifications of a canvas of
// P1, which carry the completion's output, and that its list and total
// count only its own.
func TestProjectAccess_Deliveries(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := e.Key(canvas.RoleAdmin, w.P2)
	path := "/webhooks/deliveries/" + w.Delivery

	t.Run("Get", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodGet, path, other, nil))
		r := e.Do(http.MethodGet, path, e.Key(canvas.RoleViewer, w.P1), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), "Hello Ada", "the delivery holds the completion's output")
	})
	t.Run("Redeliver", func(t *testing.T) {
		requireForbidden(t, e.Do(http.MethodPost, path+"/redeliver", other, nil))
	})
	t.Run("List", func(t *testing.T) {
		// A canvas of P2 with its own application and notification.
		c := mustCanvas(t, e.testEnv, w.P2, "Other")["id"].(string)
		v := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c,
			"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "P2"}})["id"].(string)
		publish(t, e.testEnv, c, v)
		app := mustCreate(t, e.testEnv, "/applications", other, map[string]any{"name": "p2", "promptId": c,
			"events": map[string]any{"enabled": true, "url": w.Hook.URL}})["id"].(string)
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": c, "application_id": app})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		var page deliveryPage
		r = e.Do(http.MethodGet, "/webhooks/deliveries", other, nil)
		r.JSON(t, &page)
		require.Len(t, page.Data, 1, "%s", r.Body)
		assert.Equal(t, 1, page.Meta.TotalCount)
		assert.Equal(t, app, *page.Data[0].ApplicationID)
		assert.Empty(t, ids(t, e.Do(http.MethodGet, "/webhooks/deliveries?applicationId="+w.App, other, nil)))

		e.Do(http.MethodGet, "/webhooks/deliveries", e.Viewer, nil).JSON(t, &page)
		assert.Equal(t, 2, page.Meta.TotalCount, "an unrestricted key sees both")
	})
}

// TestProjectAccess_Runs checks that a key limited to project P2 reads no
// run of a canvas of P1, and of tasks, which belong to no canvas, only
// those it created.
func TestProjectAccess_Runs(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := e.Key(canvas.RoleEditor, w.P2)

	requireForbidden(t, e.Do(http.MethodGet, "/v2/chat/completions/"+w.Completion, other, nil))
	requireForbidden(t, e.Do(http.MethodGet, "/v1/tasks/"+w.Task, other, nil))
	requireForbidden(t, e.Do(http.MethodGet, "/workflow/runs/"+w.WorkflowRun, other, nil))
	requireForbidden(t, e.Do(http.MethodGet, "/test-case/generations/"+w.Generation, other, nil))
	requireForbidden(t, e.Do(http.MethodGet, "/test-case/executions/"+w.Execution, other, nil))

	r := e.Do(http.MethodPost, "/v1/tasks", other, map[string]any{"prompt": "mine"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	own := r.Map(t)["id"].(string)
	assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, "/v1/tasks/"+own, other, nil).Status)
	assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, "/v1/tasks/"+w.Task, e.Viewer, nil).Status)
}

// TestProjectAccess_Files checks that a key limited to a project reaches
// only the vault files it uploaded: it can neither read, delete nor run a
// canvas with a file of someone else.
func TestProjectAccess_Files(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := e.Key(canvas.RoleEditor, w.P2)
	path := "/v3/files/" + w.File
	date := []string{"x-compatibility-date", compatDate}

	requireForbidden(t, e.Do(http.MethodGet, path, other, nil, date...))
	requireForbidden(t, e.Do(http.MethodDelete, path, other, nil, date...))
	assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, path, e.Viewer, nil, date...).Status, "the file remains")

	c := mustCanvas(t, e.testEnv, w.P2, "Reader")["id"].(string)
	v := mustCreate(t, e.testEnv, "/prompt-version", other, map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Read {{doc}}"},
		"variables":     []any{map[string]any{"name": "doc", "type": "file"}}})["id"].(string)
	run := func(file string) *testResponse {
		return e.Do(http.MethodPost, "/v2/chat/completions", other, map[string]any{"canvas_id": c, "version_id": v,
			"variables": map[string]any{"doc": map[string]any{"file_url": "vault://" + file}}})
	}
	r := run(w.File)
	requireForbidden(t, r)
	assert.NotContains(t, string(r.Body), "secret notes")

	r = e.Do(http.MethodPost, "/v3/files", other, map[string]any{"fileName": "own.txt"}, date...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var up struct{ ID, UploadURL string }
	r.JSON(t, &up)
	require.Equal(t, http.StatusOK, e.Do(http.MethodPut, up.UploadURL[len(testBaseURL):], "", []byte("own notes"), "Content-Type", "text/plain").Status)
	r = run(up.ID)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "own notes")
}

// TestProjectAccess_GenerationFiles checks that a test case run by a key
// limited to a project resolves its files as that key may: a file someone
// else uploaded fails the generation instead of reaching the model.
func TestProjectAccess_GenerationFiles(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := e.Key(canvas.RoleEditor, w.P2)
	c := mustCanvas(t, e.testEnv, w.P2, "Reader")["id"].(string)
	v := mustCreate(t, e.testEnv, "/prompt-version", other, map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Read {{doc}}"},
		"variables":     []any{map[string]any{"name": "doc", "type": "file"}}})["id"].(string)
	tc := mustCreate(t, e.testEnv, "/test-case", other, map[string]any{"promptId": c, "title": "steal",
		"files": []any{map[string]any{"index": 0, "name": "notes.txt", "mimeType": "text/plain",
			"variableName": "doc", "vaultUrl": "vault://" + w.File, "url": ""}}})["id"].(string)
	r := e.Do(http.MethodPost, "/test-case/"+tc+"/run", other, map[string]any{"promptVersionId": v})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	gen := r.Map(t)["generationId"].(string)

	e.RunGenerations(t)
	var g map[string]any
	require.Eventually(t, func() bool {
		g = e.Do(http.MethodGet, "/test-case/generations/"+gen, other, nil).Map(t)
		return g["status"] == "failed" || g["status"] == "completed"
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "failed", g["status"], "%v", g)
	genErr, _ := g["error"].(map[string]any)
	assert.Equal(t, canvas.EFORBIDDEN, genErr["code"])
	assert.Nil(t, g["output"], "the file never reached the model")
}
