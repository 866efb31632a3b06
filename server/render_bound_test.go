package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion_RenderBound checks that a prompt that would render past
// the bound (a 1 MB value repeated by 1,000 placeholders: 1 GB) is refused
// with 413 naming the variable, sync and async, before anything is
// rendered in full or queued.
func TestCompletion_RenderBound(t *testing.T) {
	e := newCompletionEnv(t, false)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	v := e.Do(http.MethodPost, "/prompt-version", e.Editor, map[string]any{"promptId": ec.Canvas.ID,
		"message": map[string]any{"role": "user", "content": strings.Repeat("{{a}} ", 1000)}})
	require.Equal(t, http.StatusCreated, v.Status, "%s", v.Body)
	versionID := v.Map(t)["id"].(string)
	big := strings.Repeat("x", 1<<20)

	for _, async := range []bool{false, true} {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"version_id": versionID, "variables": map[string]any{"a": big}, "async": async})
		require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "async=%v: %s", async, r.Body)
		got := r.Map(t)
		assert.Equal(t, "PAYLOAD_TOO_LARGE", got["code"])
		assert.Equal(t, "/json/variables/a", got["details"].([]any)[0].(map[string]any)["path"])
	}
	r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"version_id": versionID, "variables": map[string]any{"a": "small"}})
	require.Equal(t, http.StatusOK, r.Status, "a value within the bound renders: %s", r.Body)
}
