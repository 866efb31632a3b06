package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeliveryService_Redeliver(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	o, err := webhook.NewOutgoing(ws.ID, "run-1", webhook.Delivery{URL: "https://example.com/hook",
		Event: webhook.Event{Type: webhook.EventTaskFailed, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	require.NoError(t, db.CreateDeliveries(ctx, []webhook.Outgoing{o}))
	claimed, err := db.ClaimJobs(ctx, "w", []string{webhook.JobKind}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	require.NoError(t, db.FailJob(ctx, queue.FailJobParams{ID: claimed[0].ID,
		Owner: "w", LastError: "attempt 1: receiver answered 410 Gone"}))
	svc := webhook.NewDeliveryService(webhook.DeliveryOptions{Log: db, Applications: db, Sender: localSender()})
	as := func(role canvas.Role) context.Context {
		return canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: role})
	}

	t.Run("OK", func(t *testing.T) {
		d, err := svc.Redeliver(as(canvas.RoleAdmin), o.Delivery.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, d.Status)
		jobs, err := db.ClaimJobs(ctx, "w", []string{webhook.JobKind}, 10, time.Minute)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		j := jobs[0]
		assert.Equal(t, ws.ID, j.WorkspaceID)
		assert.Equal(t, o.Delivery.ID, j.RefID, "a redelivery serves the delivery itself")
		assert.Equal(t, len(webhook.RetrySchedule())+1, j.MaxAttempts, "a fresh retry schedule")
		assert.JSONEq(t, string(o.Job.Payload), string(j.Payload), "the same notification, webhook-id included")
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, err := svc.Redeliver(as(canvas.RoleEditor), o.Delivery.ID)
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))
	})
	t.Run("NotFound", func(t *testing.T) {
		_, err := svc.Redeliver(as(canvas.RoleAdmin), "55555555-5555-4555-8555-555555555555")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
}
