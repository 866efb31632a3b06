package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Delivery enqueues a delivery job of the fixture's workspace and returns
// it; its log row is written with it.
func (f *fixture) Delivery(applicationID, eventType string) *queue.Job {
	f.t.Helper()
	j, err := webhook.NewJob(f.ws.ID, "ref", webhook.Delivery{URL: "https://example.com/hook", ApplicationID: applicationID,
		Headers: []webhook.Header{{Name: "authorization", Value: "Bearer t"}},
		Event:   webhook.Event{Type: eventType, Timestamp: time.Unix(1700000000, 0).UTC(), Data: json.RawMessage(`{"id":"r1"}`)}})
	require.NoError(f.t, err)
	require.NoError(f.t, f.s.EnqueueJob(f.ctx, j))
	return j
}

// deliveryID returns the webhook-id of a delivery job.
func deliveryID(t *testing.T, j *queue.Job) string {
	t.Helper()
	var d webhook.Delivery
	require.NoError(t, json.Unmarshal(j.Payload, &d))
	return d.ID
}

func testDeliveries(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "LoggedWithItsJob", func(t *testing.T, f *fixture) {
		j := f.Delivery("", webhook.EventCompletionSucceeded)
		d, err := f.s.GetDelivery(f.ctx, f.ws.ID, deliveryID(t, j))
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, d.Status)
		assert.Nil(t, d.ApplicationID, "a per-request webhook_url has no application")
		assert.Equal(t, webhook.EventCompletionSucceeded, d.EventType)
		assert.Equal(t, "https://example.com/hook", d.URL)
		assert.JSONEq(t, `{"type":"completion.succeeded","timestamp":"2023-11-14T22:13:20Z","data":{"id":"r1"}}`, string(d.Event))
		assert.Zero(t, d.AttemptCount)
		assert.Empty(t, d.Attempts)
	})
	run(t, newStore, "RecordAttempt", func(t *testing.T, f *fixture) {
		j := f.Delivery("app-1", webhook.EventCompletionFailed)
		id := deliveryID(t, j)
		at := time.Unix(1700000100, 0).UTC()
		msg := "webhook: receiver answered 500 Internal Server Error"
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
			Attempt: &webhook.LoggedAttempt{At: at, StatusCode: ptr(500), LatencyMs: 12, Error: &msg, ResponseBody: "oops"},
			Status:  webhook.StatusPending, LastError: msg}))
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
			Attempt: &webhook.LoggedAttempt{At: at.Add(time.Second), StatusCode: ptr(204), LatencyMs: 3},
			Status:  webhook.StatusSucceeded}))
		d, err := f.s.GetDelivery(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusSucceeded, d.Status)
		assert.Nil(t, d.LastError, "a success clears the last error")
		require.NotNil(t, d.ApplicationID)
		assert.Equal(t, "app-1", *d.ApplicationID)
		assert.Equal(t, 2, d.AttemptCount)
		require.Len(t, d.Attempts, 2)
		assert.Equal(t, webhook.LoggedAttempt{Number: 1, At: at, StatusCode: ptr(500), LatencyMs: 12, Error: &msg, ResponseBody: "oops"}, d.Attempts[0])
		assert.Equal(t, webhook.LoggedAttempt{Number: 2, At: at.Add(time.Second), StatusCode: ptr(204), LatencyMs: 3}, d.Attempts[1])

		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
			Status: webhook.StatusFailed, LastError: webhook.ReasonSubscriptionDisabled}))
		d, err = f.s.GetDelivery(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusFailed, d.Status)
		assert.Equal(t, 2, d.AttemptCount, "an outcome without an attempt adds none")
		require.NotNil(t, d.LastError)
		assert.Equal(t, webhook.ReasonSubscriptionDisabled, *d.LastError)
	})
	run(t, newStore, "RecordAttempts", func(t *testing.T, f *fixture) {
		a, b := deliveryID(t, f.Delivery("", webhook.EventTaskSucceeded)), deliveryID(t, f.Delivery("", webhook.EventTaskFailed))
		at := time.Unix(1700000200, 0).UTC()
		require.NoError(t, f.s.RecordAttempts(f.ctx, []webhook.AttemptOutcome{
			{WorkspaceID: f.ws.ID, DeliveryID: a, Attempt: &webhook.LoggedAttempt{At: at, StatusCode: ptr(500)}, Status: webhook.StatusPending, LastError: "500"},
			{WorkspaceID: f.ws.ID, DeliveryID: "unknown", Attempt: &webhook.LoggedAttempt{At: at}, Status: webhook.StatusSucceeded},
			{WorkspaceID: f.ws.ID, DeliveryID: b, Attempt: &webhook.LoggedAttempt{At: at, StatusCode: ptr(200)}, Status: webhook.StatusSucceeded},
			{WorkspaceID: f.ws.ID, DeliveryID: a, Attempt: &webhook.LoggedAttempt{At: at.Add(time.Second), StatusCode: ptr(202)}, Status: webhook.StatusSucceeded},
		}), "an unknown delivery is skipped")
		da, err := f.s.GetDelivery(f.ctx, f.ws.ID, a)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusSucceeded, da.Status, "outcomes apply in order")
		require.Len(t, da.Attempts, 2)
		assert.Equal(t, 500, *da.Attempts[0].StatusCode)
		assert.Equal(t, 202, *da.Attempts[1].StatusCode)
		db, err := f.s.GetDelivery(f.ctx, f.ws.ID, b)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusSucceeded, db.Status)
		assert.Len(t, db.Attempts, 1)
	})
	run(t, newStore, "NotFound", func(t *testing.T, f *fixture) {
		id := deliveryID(t, f.Delivery("", webhook.EventTaskSucceeded))
		other := f.Workspace("other")
		_, err := f.s.GetDelivery(f.ctx, other.ID, id)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.Redeliver(f.ctx, other.ID, id)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: other.ID,
			DeliveryID: id, Status: webhook.StatusFailed}))
		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: other.ID, Limit: 10})
		require.NoError(t, err)
		assert.Zero(t, page.Total)
		assert.Empty(t, page.Items)
	})
	run(t, newStore, "List", func(t *testing.T, f *fixture) {
		ids := []string{
			deliveryID(t, f.Delivery("app-1", webhook.EventCompletionSucceeded)),
			deliveryID(t, f.Delivery("app-2", webhook.EventCompletionSucceeded)),
			deliveryID(t, f.Delivery("app-1", webhook.EventPublicationCreated)),
			deliveryID(t, f.Delivery("", webhook.EventTaskFailed)),
		}
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: ids[0],
			Attempt: &webhook.LoggedAttempt{At: time.Now(), StatusCode: ptr(200)}, Status: webhook.StatusSucceeded}))
		list := func(filter webhook.DeliveryFilter) ([]string, int) {
			t.Helper()
			filter.WorkspaceID = f.ws.ID
			page, err := f.s.ListDeliveries(f.ctx, filter)
			require.NoError(t, err)
			var got []string
			for _, d := range page.Items {
				got = append(got, d.ID)
				assert.Empty(t, d.Attempts, "a list carries no attempts")
			}
			return got, page.Total
		}
		got, total := list(webhook.DeliveryFilter{Limit: 2})
		assert.Equal(t, []string{ids[3], ids[2]}, got, "newest first")
		assert.Equal(t, 4, total)
		got, _ = list(webhook.DeliveryFilter{Limit: 2, Offset: 2})
		assert.Equal(t, []string{ids[1], ids[0]}, got)
		got, total = list(webhook.DeliveryFilter{ApplicationID: "app-1", Limit: 10})
		assert.Equal(t, []string{ids[2], ids[0]}, got)
		assert.Equal(t, 2, total)
		got, _ = list(webhook.DeliveryFilter{Status: webhook.StatusSucceeded, Limit: 10})
		assert.Equal(t, []string{ids[0]}, got)
		got, _ = list(webhook.DeliveryFilter{EventType: webhook.EventCompletionSucceeded, Status: webhook.StatusPending, Limit: 10})
		assert.Equal(t, []string{ids[1]}, got)
	})
	run(t, newStore, "Redeliver", func(t *testing.T, f *fixture) {
		first := f.Delivery("app-1", webhook.EventCompletionSucceeded)
		id := deliveryID(t, first)
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
			Attempt: &webhook.LoggedAttempt{At: time.Now(), StatusCode: ptr(410)}, Status: webhook.StatusFailed, LastError: "gone"}))
		d, err := f.s.Redeliver(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, d.Status)
		assert.Len(t, d.Attempts, 1, "earlier attempts stay in the log")

		jobs, err := f.s.ClaimJobs(f.ctx, "w", []string{webhook.JobKind}, 10, time.Minute)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the first job and the redelivery")
		var again *queue.Job
		for _, j := range jobs {
			if j.ID != first.ID {
				again = j
			}
		}
		require.NotNil(t, again)
		assert.Equal(t, id, deliveryID(t, again), "the same webhook-id")
		assert.JSONEq(t, string(first.Payload), string(again.Payload))
		assert.Equal(t, f.ws.ID, again.WorkspaceID)

		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 1, page.Total, "a redelivery is the same delivery")
	})
	run(t, newStore, "EndsWithItsJob", func(t *testing.T, f *fixture) {
		// status returns the logged status and last error of delivery job j.
		status := func(j *queue.Job) (string, string) {
			t.Helper()
			d, err := f.s.GetDelivery(f.ctx, f.ws.ID, deliveryID(t, j))
			require.NoError(t, err)
			if d.LastError == nil {
				return d.Status, ""
			}
			return d.Status, *d.LastError
		}
		claim := func(j *queue.Job) {
			t.Helper()
			got := f.Claim("w1", 1, longLease, webhook.JobKind)
			require.Len(t, got, 1)
			require.Equal(t, j.ID, got[0].ID)
		}

		failed := f.Delivery("", webhook.EventTaskFailed)
		claim(failed)
		require.NoError(t, f.s.FailJob(f.ctx, failed.ID, "w1", "handler panicked"))
		st, msg := status(failed)
		assert.Equal(t, webhook.StatusFailed, st, "failed by the worker, not the deliverer")
		assert.Equal(t, "handler panicked", msg)

		completed := f.Delivery("", webhook.EventTaskSucceeded)
		claim(completed)
		require.NoError(t, f.s.CompleteJob(f.ctx, completed.ID, "w1"))
		st, msg = status(completed)
		assert.Equal(t, webhook.StatusSucceeded, st, "a job succeeds only when the receiver accepted it")
		assert.Empty(t, msg)

		recorded := f.Delivery("", webhook.EventTaskFailed)
		claim(recorded)
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID,
			DeliveryID: deliveryID(t, recorded), Attempt: &webhook.LoggedAttempt{At: time.Now(), StatusCode: ptr(410)},
			Status: webhook.StatusFailed, LastError: "receiver answered 410 Gone"}))
		require.NoError(t, f.s.FailJob(f.ctx, recorded.ID, "w1", "attempt 1: receiver answered 410 Gone"))
		st, msg = status(recorded)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "receiver answered 410 Gone", msg, "what the deliverer recorded stands")

		cancelled := f.Delivery("", webhook.EventTaskSucceeded) // serves "ref"
		n, err := f.s.CancelJobs(f.ctx, "ref")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		st, msg = status(cancelled)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "delivery job cancelled", msg)
	})
	run(t, newStore, "EndsWithItsJobOnLeaseExpiry", func(t *testing.T, f *fixture) {
		j, err := webhook.NewJob(f.ws.ID, "ref", webhook.Delivery{URL: "https://example.com/hook",
			Event: webhook.Event{Type: webhook.EventTaskSucceeded, Timestamp: time.Now(), Data: json.RawMessage(`{}`)}})
		require.NoError(t, err)
		j.MaxAttempts = 1
		require.NoError(t, f.s.EnqueueJob(f.ctx, j))
		require.Len(t, f.Claim("w1", 1, shortLease, webhook.JobKind), 1)
		// The claim that finds the last attempt's lease expired fails the
		// job; no worker is left to record the delivery.
		require.Eventually(t, func() bool {
			f.Claim("w2", 1, longLease, webhook.JobKind)
			return f.GetJob(j.ID).Status == queue.StatusFailed
		}, 5*time.Second, 5*time.Millisecond)
		d, err := f.s.GetDelivery(f.ctx, f.ws.ID, deliveryID(t, j))
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusFailed, d.Status)
		require.NotNil(t, d.LastError)
		assert.Equal(t, "lease expired after 1 attempts", *d.LastError)
	})
	run(t, newStore, "PendingWhileRedelivered", func(t *testing.T, f *fixture) {
		first := f.Delivery("", webhook.EventTaskSucceeded)
		id := deliveryID(t, first)
		_, err := f.s.Redeliver(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		jobs, err := f.s.ClaimJobs(f.ctx, "w1", []string{webhook.JobKind}, 10, longLease)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.NoError(t, f.s.FailJob(f.ctx, first.ID, "w1", "attempt 1: timeout"))
		d, err := f.s.GetDelivery(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, d.Status, "the redelivery's job still serves it")
		for _, j := range jobs {
			if j.ID != first.ID {
				require.NoError(t, f.s.FailJob(f.ctx, j.ID, "w1", "attempt 1: timeout"))
			}
		}
		d, err = f.s.GetDelivery(f.ctx, f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusFailed, d.Status)
	})
}
