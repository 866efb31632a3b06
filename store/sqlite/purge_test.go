package sqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDB_PurgeDeliveries_Attempts(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	deliver := func(status string) string {
		o, err := webhook.NewOutgoing(ws.ID, "ref", webhook.Delivery{URL: "https://example.com/hook",
			Event: webhook.Event{Type: webhook.EventCompletionSucceeded, Timestamp: now, Data: json.RawMessage(`{}`)}})
		require.NoError(t, err)
		require.NoError(t, db.CreateDeliveries(ctx, []webhook.Outgoing{o}))
		for i := range 2 {
			require.NoError(t, db.RecordAttempt(ctx, webhook.AttemptOutcome{WorkspaceID: ws.ID, DeliveryID: o.Delivery.ID,
				Attempt: &webhook.LoggedAttempt{At: now.Add(time.Duration(i) * time.Second), StatusCode: ptrTo(500),
					ResponseBody: "no"}, Status: status}))
		}
		return o.Delivery.ID
	}
	attempts := func(id string) int {
		var n int
		require.NoError(t, db.read.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?`, id).Scan(&n))
		return n
	}
	failed, pending := deliver(webhook.StatusFailed), deliver(webhook.StatusPending)
	require.Equal(t, 2, attempts(failed))

	n, err := db.PurgeDeliveries(ctx, now.Add(time.Second), 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Zero(t, attempts(failed), "the attempts go with their delivery")
	assert.Equal(t, 2, attempts(pending), "a pending delivery keeps its attempts")
	_, err = db.GetDelivery(ctx, ws.ID, failed)
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
}

func ptrTo[T any](v T) *T { return &v }
