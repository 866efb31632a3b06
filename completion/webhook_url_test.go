package completion_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
)

// TestService_WebhookURL checks that a webhook URL no delivery could use is
// refused when the run or task is asked for, not when it is delivered.
func TestService_WebhookURL(t *testing.T) {
	f := testfiles.New(t)
	canvases := canvas.NewService(canvas.Options{Store: f.DB})
	envs := env.NewService(env.Options{Store: f.DB, Canvases: f.DB, Changes: f.DB})
	svc := completion.NewService(completion.Options{Store: f.DB, Canvases: f.DB, Environments: envs,
		Models: model.NewCaller(model.Options{})})
	c, err := canvases.CreateCanvas(f.Ctx, canvas.CreateCanvasParams{Title: "Hooks"})
	require.NoError(t, err)
	v, err := canvases.CreateVersion(f.Ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Message: &canvas.MessageInput{Content: "Hello"}})
	require.NoError(t, err)

	for _, url := range []string{"http://", "http:///x", "https://", "ftp://example.com/hook", "example.com/hook", "http://:8080/x"} {
		t.Run(url, func(t *testing.T) {
			_, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID, WebhookURL: url})
			requireDetail(t, err, "/json/webhook_url")
			_, err = svc.RunTask(f.Ctx, completion.TaskParams{Prompt: "Hi", WebhookURL: url})
			requireDetail(t, err, "/json/webhook_url")
		})
	}
	t.Run("OK", func(t *testing.T) {
		run, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID, WebhookURL: "https://example.com/hook"})
		require.NoError(t, err)
		assert.Equal(t, completion.StatusQueued, run.Status)
		task, err := svc.RunTask(f.Ctx, completion.TaskParams{Prompt: "Hi", WebhookURL: "http://127.0.0.1:9/hook"})
		require.NoError(t, err)
		assert.Equal(t, completion.StatusQueued, task.Status)
	})
}

// requireDetail checks a VALIDATION error with one detail at path.
func requireDetail(t *testing.T, err error, path string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
	details := canvas.ErrorDetails(err)
	require.Len(t, details, 1)
	assert.Equal(t, path, details[0].Path)
}
