package server_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
)

func TestTask_Create(t *testing.T) {
	e := newCompletionEnv(t, true)

	t.Run("OK", func(t *testing.T) {
		hook := newHookReceiver(t)
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{
			"prompt": "Hello {{who}}", "variables": map[string]any{"who": "Bob"}, "webhook_url": hook.URL},
			"X-Svc-Forward-Order", "42")
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, completion.StatusQueued, got["status"])
		id := got["id"].(string)

		n := hook.next(t)
		assert.Equal(t, "task.succeeded", n.Event.Type)
		assert.Equal(t, "42", n.Header.Get("Order"))
		assert.Equal(t, id, n.Event.Data["id"])
		assert.Equal(t, "Hello Bob", completionText(t, n.Event.Data["result"].(map[string]any)))

		run := e.waitRun(t, "/v1/tasks/"+id)
		assert.Equal(t, completion.StatusCompleted, run["status"])
		assert.Equal(t, "task", run["kind"])
		assert.Equal(t, "echo", run["model"])
		assert.Equal(t, "Hello Bob", completionText(t, run["result"].(map[string]any)))
	})
	t.Run("NoWebhook", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "just {{this}}", "model": "echo"})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		run := e.waitRun(t, "/v1/tasks/"+r.Map(t)["id"].(string))
		assert.Equal(t, "just {{this}}", completionText(t, run["result"].(map[string]any)),
			"a placeholder without a value is left as written")
	})
	for _, tc := range []struct {
		name   string
		token  string
		body   map[string]any
		status int
		code   string
	}{
		{"MissingPrompt", e.Editor, map[string]any{"model": "echo"}, 422, canvas.EINVALID},
		{"BlankPrompt", e.Editor, map[string]any{"prompt": "  "}, 422, canvas.EINVALID},
		{"UnknownModel", e.Editor, map[string]any{"prompt": "hi", "model": "nope"}, 422, canvas.EINVALID},
		{"BadWebhookURL", e.Editor, map[string]any{"prompt": "hi", "webhook_url": "ftp://x"}, 422, canvas.EINVALID},
		{"Unauthorized", "", map[string]any{"prompt": "hi"}, 401, canvas.EUNAUTHORIZED},
		{"Forbidden", e.Viewer, map[string]any{"prompt": "hi"}, 403, canvas.EFORBIDDEN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(http.MethodPost, "/v1/tasks", tc.token, tc.body)
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			assert.Equal(t, tc.code, readError(t, r).Code)
		})
	}
}

func TestTask_Get(t *testing.T) {
	e := newCompletionEnv(t, false)
	r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "hi"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	id := r.Map(t)["id"].(string)

	t.Run("OK", func(t *testing.T) {
		got := e.Do(http.MethodGet, "/v1/tasks/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
		assert.Equal(t, completion.StatusQueued, got.Map(t)["status"], "no worker runs in this test")
	})
	t.Run("NotFound", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, "/v1/tasks/"+uuid.NewString(), e.Viewer, nil).Status)
		other := e.KeyIn(mustWorkspace(t, e.testEnv, "elsewhere"), canvas.RoleAdmin)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, "/v1/tasks/"+id, other, nil).Status)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		assert.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, "/v1/tasks/"+id, "", nil).Status)
	})
}

// mustWorkspace creates another workspace and returns its id.
func mustWorkspace(t *testing.T, e *testEnv, name string) string {
	t.Helper()
	ws := &canvas.Workspace{Name: name}
	require.NoError(t, e.Store.CreateWorkspace(t.Context(), ws))
	return ws.ID
}
