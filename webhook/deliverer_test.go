package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deliveryJob is the queue job of a delivery to url, as NewOutgoing builds
// it, at its n-th claim.
func deliveryJob(t *testing.T, url string, n int) *queue.Job {
	t.Helper()
	o, err := webhook.NewOutgoing("ws1", "run1", *testDelivery(url))
	require.NoError(t, err)
	o.Job.ID, o.Job.Attempts = "job1", n
	return o.Job
}

func TestDeliverer_Handle(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		rc := newReceiver(t)
		h := webhook.NewHandler(localSender())
		assert.NoError(t, h(ctx, deliveryJob(t, rc.URL, 1)))
		assert.Len(t, rc.requests(), 1)
	})
	t.Run("RetryFollowsSchedule", func(t *testing.T) {
		rc := newReceiver(t, http.StatusInternalServerError)
		d := &webhook.Deliverer{Sender: localSender()}
		for n, base := range webhook.RetrySchedule() {
			err := d.Handle(ctx, deliveryJob(t, rc.URL, n+1))
			require.Error(t, err)
			assert.False(t, queue.IsPermanent(err))
			assert.Contains(t, err.Error(), "500")
			delay, ok := queue.RetryDelay(err)
			require.True(t, ok)
			assert.InDelta(t, float64(base), float64(delay), float64(base)/10, "retry %d", n+1)
		}
		delay, ok := queue.RetryDelay(d.Handle(ctx, deliveryJob(t, rc.URL, 20)))
		require.True(t, ok)
		assert.InDelta(t, float64(24*time.Hour), float64(delay), float64(24*time.Hour)/10, "past the schedule, its last step")
	})
	t.Run("InjectedScheduleAndJitter", func(t *testing.T) {
		rc := newReceiver(t, http.StatusBadGateway)
		d := &webhook.Deliverer{Sender: localSender(), Schedule: []time.Duration{time.Millisecond, 2 * time.Millisecond},
			Jitter: func(d time.Duration) time.Duration { return d * 3 }}
		delay, _ := queue.RetryDelay(d.Handle(ctx, deliveryJob(t, rc.URL, 2)))
		assert.Equal(t, 6*time.Millisecond, delay)
	})
	t.Run("RetryAfterWins", func(t *testing.T) {
		rc := newReceiver(t, http.StatusTooManyRequests)
		rc.header.Set("Retry-After", "7")
		err := webhook.NewHandler(localSender())(ctx, deliveryJob(t, rc.URL, 1))
		delay, ok := queue.RetryDelay(err)
		require.True(t, ok)
		assert.Equal(t, 7*time.Second, delay)
	})
	t.Run("GonePermanent", func(t *testing.T) {
		rc := newReceiver(t, http.StatusGone)
		err := webhook.NewHandler(localSender())(ctx, deliveryJob(t, rc.URL, 1))
		assert.True(t, queue.IsPermanent(err))
		assert.ErrorContains(t, err, "attempt 1")
	})
	t.Run("GuardRefusalPermanent", func(t *testing.T) {
		rc := newReceiver(t)
		err := webhook.NewHandler(webhook.NewSender(webhook.SenderOptions{}))(ctx, deliveryJob(t, rc.URL, 1))
		assert.True(t, queue.IsPermanent(err))
		assert.Empty(t, rc.requests())
	})
	t.Run("BadPayloadPermanent", func(t *testing.T) {
		j := &queue.Job{ID: "j", Kind: webhook.JobKind, Payload: json.RawMessage(`[1]`), Attempts: 1}
		assert.True(t, queue.IsPermanent(webhook.NewHandler(localSender())(ctx, j)))
	})
	t.Run("SameIDOnEveryAttempt", func(t *testing.T) {
		rc := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
		d := testDelivery(rc.URL)
		d.ID = ""
		o, err := webhook.NewOutgoing("ws1", "run1", *d)
		require.NoError(t, err)
		j := o.Job
		h := webhook.NewHandler(localSender())
		j.Attempts = 1
		require.Error(t, h(ctx, j))
		j.Attempts = 2
		require.NoError(t, h(ctx, j))
		got := rc.requests()
		require.Len(t, got, 2)
		assert.NotEmpty(t, got[0].Header.Get("webhook-id"), "NewOutgoing gives the delivery an id")
		assert.Equal(t, got[0].Header.Get("webhook-id"), got[1].Header.Get("webhook-id"))
	})
	t.Run("CancelledIsNotTheReceiversFault", func(t *testing.T) {
		rc := newReceiver(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := webhook.NewHandler(localSender())(cctx, deliveryJob(t, rc.URL, 1))
		assert.ErrorIs(t, err, context.Canceled)
		assert.False(t, queue.IsPermanent(err))
	})
}

func TestJitter(t *testing.T) {
	for range 100 {
		d := webhook.Jitter(time.Minute)
		assert.GreaterOrEqual(t, d, 54*time.Second)
		assert.LessOrEqual(t, d, 66*time.Second)
	}
	assert.Equal(t, time.Duration(5), webhook.Jitter(5), "too small to spread")
}

func TestNewOutgoing(t *testing.T) {
	ev := webhook.Event{Type: webhook.EventTaskSucceeded, Timestamp: time.Unix(1700000000, 0).UTC(),
		Data: json.RawMessage(`{"id":"r1"}`)}
	o, err := webhook.NewOutgoing("ws1", "run1", webhook.Delivery{ID: "d1", URL: "https://example.com",
		ApplicationID: "app-1", Headers: []webhook.Header{{Name: "tenant", Value: "t1"}}, Event: ev})
	require.NoError(t, err)
	j := o.Job
	assert.Equal(t, webhook.JobKind, j.Kind)
	assert.Equal(t, "ws1", j.WorkspaceID)
	assert.Equal(t, "run1", j.RefID)
	assert.Equal(t, len(webhook.RetrySchedule())+1, j.MaxAttempts, "an attempt per retry and the first")
	var d webhook.Delivery
	require.NoError(t, json.Unmarshal(j.Payload, &d))
	assert.Equal(t, "d1", d.ID)
	assert.Equal(t, []webhook.Header{{Name: "tenant", Value: "t1"}}, d.Headers)

	r := o.Delivery
	assert.Equal(t, "d1", r.ID)
	assert.Equal(t, "ws1", r.WorkspaceID)
	assert.Equal(t, "app-1", r.ApplicationID)
	assert.Equal(t, webhook.EventTaskSucceeded, r.EventType)
	assert.Equal(t, "https://example.com", r.URL)
	assert.JSONEq(t, string(j.Payload), string(r.Payload), "the row keeps the job's payload for a redelivery")
	assert.JSONEq(t, `{"type":"task.succeeded","timestamp":"2023-11-14T22:13:20Z","data":{"id":"r1"}}`, string(r.Event))

	fresh, err := webhook.NewOutgoing("ws1", "run1", webhook.Delivery{URL: "https://example.com"})
	require.NoError(t, err)
	assert.NotEmpty(t, fresh.Delivery.ID, "an empty id is given a new one")
}
