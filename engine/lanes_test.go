package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
)

// TestEngine_SlowReceiver checks that webhook deliveries to a receiver that
// does not answer hold the delivery lane only: with every delivery slot
// taken, unrelated asynchronous completions still run to the end.
func TestEngine_SlowReceiver(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	var held atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(receiver.Close)

	const deliverySlots = 4
	e, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{Limits: engine.Limits{
		AllowPrivateNetworks: true, DeliveryConcurrency: deliverySlots}})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	t.Cleanup(func() { close(release) }) // first: the held deliveries end, then the engine closes
	go e.Run(ctx)

	_, _, err = e.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	require.NoError(t, err)
	v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Message: &canvas.MessageInput{Content: "Hello"}})
	require.NoError(t, err)
	_, _, err = e.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
	require.NoError(t, err)

	// Twice as many notifications as the delivery lane has slots.
	for range 2 * deliverySlots {
		_, err := e.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, WebhookURL: receiver.URL})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return held.Load() == deliverySlots }, 30*time.Second, 10*time.Millisecond,
		"every delivery slot is held by the receiver")

	var runs []*completion.Run
	for range 10 {
		r, err := e.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, Async: true})
		require.NoError(t, err)
		runs = append(runs, r)
	}
	for _, r := range runs {
		require.Eventually(t, func() bool {
			got, err := e.Completions.GetRun(ctx, r.ID)
			return err == nil && got.Status == completion.StatusCompleted
		}, 30*time.Second, 10*time.Millisecond, "a completion runs while the deliveries hold their lane")
	}
	require.EqualValues(t, deliverySlots, held.Load(), "the receiver still holds the first deliveries, and no more")
}
