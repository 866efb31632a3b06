package demo_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
)

func TestOpen(t *testing.T) {
	d, ctx, err := demo.Open(context.Background(), "demo-test", canvas.RoleEditor, engine.Options{})
	require.NoError(t, err)

	assert.Equal(t, canvas.DefaultWorkspaceName, d.Workspace.Name)
	assert.True(t, canvas.IsAPIKeyToken(d.AdminToken))
	assert.Equal(t, &canvas.Principal{WorkspaceID: d.Workspace.ID, UserID: demo.UserID, Role: canvas.RoleEditor},
		canvas.PrincipalFrom(ctx))
	_, err = d.Store.GetWorkspace(ctx, d.Workspace.ID)
	require.NoError(t, err)
	require.DirExists(t, d.Dir)

	require.NoError(t, d.Close())
	_, err = os.Stat(d.Dir)
	assert.True(t, os.IsNotExist(err), "Close removes the directory")
}

// TestDemo_Background checks that the engine's background work runs: an
// asynchronous task is executed by it.
func TestDemo_Background(t *testing.T) {
	d, ctx, err := demo.Open(context.Background(), "demo-test", canvas.RoleAdmin, engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	run, err := d.Completions.RunTask(ctx, completion.TaskParams{Prompt: "Hello"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := d.Completions.GetTask(ctx, run.ID)
		return err == nil && r.Status == completion.StatusCompleted
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, d.Close())
}
