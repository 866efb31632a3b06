package demo_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	d, ctx, err := demo.Open(context.Background(), "demo-test", canvas.RoleEditor)
	require.NoError(t, err)

	assert.Equal(t, canvas.DefaultWorkspaceName, d.Workspace.Name)
	assert.True(t, canvas.IsAPIKeyToken(d.AdminToken))
	assert.Equal(t, &canvas.Principal{WorkspaceID: d.Workspace.ID, UserID: demo.UserID, Role: canvas.RoleEditor},
		canvas.PrincipalFrom(ctx))
	_, err = d.DB.GetWorkspace(ctx, d.Workspace.ID)
	require.NoError(t, err)
	require.DirExists(t, d.Dir)

	require.NoError(t, d.Close())
	_, err = os.Stat(d.Dir)
	assert.True(t, os.IsNotExist(err), "Close removes the directory")
}

func TestDemo_RunWorker(t *testing.T) {
	d, ctx, err := demo.Open(context.Background(), "demo-test", canvas.RoleAdmin)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	// The handler runs until its context is cancelled, which happens only
	// when the worker shuts down: Close must wait for that before it
	// returns.
	started := make(chan struct{})
	var ended bool
	w := queue.NewWorker(d.DB, queue.WorkerOptions{PollInterval: 10 * time.Millisecond, ShutdownTimeout: time.Millisecond})
	w.Handle("demo.wait", func(ctx context.Context, j *queue.Job) error {
		close(started)
		<-ctx.Done()
		ended = true
		return ctx.Err()
	})
	d.RunWorker(ctx, w)
	require.NoError(t, d.DB.EnqueueJob(ctx, &queue.Job{WorkspaceID: d.Workspace.ID, Kind: "demo.wait", RefID: "r1"}))
	<-started

	require.NoError(t, d.Close())
	assert.True(t, ended, "Close returns after the worker's handlers")
}
