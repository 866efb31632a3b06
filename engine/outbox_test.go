package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// queuedOf returns how many jobs of kind are queued.
func queuedOf(t *testing.T, e *engine.Engine, kind string) int {
	t.Helper()
	stats, err := e.Store.(queue.StatsStore).QueueStats(context.Background())
	require.NoError(t, err)
	for _, s := range stats {
		if s.Kind == kind {
			return s.Due + s.Scheduled + s.Running
		}
	}
	return 0
}

func TestEngine_PublishOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{}) // not running: jobs stay queued
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, e.Store.CreateWorkspace(ctx, ws))
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "alice", Role: canvas.RoleAdmin})

	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	require.NoError(t, err)
	var versions []*canvas.Version
	for range 3 {
		v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
		require.NoError(t, err)
		versions = append(versions, v)
	}
	publish := func(v *canvas.Version) {
		t.Helper()
		_, created, err := e.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
		require.NoError(t, err)
		require.True(t, created)
	}

	t.Run("NoReceiverNoJob", func(t *testing.T) {
		publish(versions[0])
		assert.Zero(t, queuedOf(t, e, webhook.JobKindCanvasEvent), "no subscription: nothing to deliver, nothing stored")
	})

	enabled, url := true, "https://receiver.example/hook"
	_, err = e.Applications.CreateApplication(ctx, webhook.CreateApplicationParams{Name: "ops", PromptID: &c.ID,
		Events: &webhook.SubscriptionParams{Enabled: &enabled, URL: &url}})
	require.NoError(t, err)

	t.Run("ReceiverGetsJob", func(t *testing.T) {
		publish(versions[1])
		assert.Equal(t, 1, queuedOf(t, e, webhook.JobKindCanvasEvent), "a subscription takes the publication")
	})
}
