package pgengine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
)

// Two engines on one Postgres database, as two replicas: the work one
// accepts, the other does; what one publishes, the other serves at once,
// its cache notwithstanding.
func TestOpen_TwoEngines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.New(t)
	front, err := pgengine.Open(ctx, dsn, engine.Options{}) // never runs: its jobs are the other's
	require.NoError(t, err)
	t.Cleanup(func() { front.Close() })
	back, err := pgengine.Open(ctx, dsn, engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { back.Close() })
	go back.Run(ctx)

	_, _, err = front.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := back.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	c, err := front.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	require.NoError(t, err)
	version := func(content string) *canvas.Version {
		v, err := front.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: content}})
		require.NoError(t, err)
		_, _, err = front.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production,
			VersionID: v.ID})
		require.NoError(t, err)
		return v
	}
	served := func() string {
		v, err := back.Environments.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: c.ID, EnvName: env.Production})
		require.NoError(t, err)
		return v.ID
	}

	v1 := version("Hello")
	assert.Equal(t, v1.ID, served())
	assert.Equal(t, v1.ID, served(), "served again, from the cache")
	hits, _ := back.Environments.CacheStats()
	require.NotZero(t, hits, "the second read was a hit")
	v2 := version("Hi")
	assert.Equal(t, v2.ID, served(), "a publish through the other engine is served at once")

	r, err := front.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, Async: true})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := front.Completions.GetRun(ctx, r.ID)
		return err == nil && got.Status == completion.StatusCompleted
	}, 30*time.Second, 10*time.Millisecond, "the running engine completes what the other accepted")

	require.NoError(t, front.Close())
	assert.Error(t, front.Store.Ping(ctx), "the store Open opened is closed")
	assert.NoError(t, back.Store.Ping(ctx), "the other's is not")
}
