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

// Outgoing returns a delivery of the fixture's workspace to an example
// URL, not yet written.
func (f *fixture) Outgoing(applicationID, eventType string) webhook.Outgoing {
	f.t.Helper()
	o, err := webhook.NewOutgoing(f.ws.ID, "ref", webhook.Delivery{URL: "https://example.com/hook", ApplicationID: applicationID,
		Headers: []webhook.Header{{Name: "authorization", Value: "Bearer t"}},
		Event:   webhook.Event{Type: eventType, Timestamp: time.Unix(1700000000, 0).UTC(), Data: json.RawMessage(`{"id":"r1"}`)}})
	require.NoError(f.t, err)
	return o
}

// Delivery writes a delivery of the fixture's workspace, its log row and
// its job, and returns it.
func (f *fixture) Delivery(applicationID, eventType string) webhook.Outgoing {
	f.t.Helper()
	o := f.Outgoing(applicationID, eventType)
	require.NoError(f.t, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{o}))
	return o
}

// Redeliver requeues the delivery id of the fixture's workspace with a job
// of the delivery kind that carries the stored payload, as the webhook
// package does, and returns the delivery and the job.
func (f *fixture) Redeliver(id string) (*webhook.LoggedDelivery, *queue.Job) {
	f.t.Helper()
	var job *queue.Job
	d, err := f.s.RequeueDelivery(f.ctx, webhook.RequeueDeliveryParams{WorkspaceID: f.ws.ID, DeliveryID: id,
		Job: func(payload json.RawMessage) *queue.Job {
			job = &queue.Job{WorkspaceID: f.ws.ID, Kind: webhook.JobKind, RefID: id, Payload: payload}
			return job
		}})
	require.NoError(f.t, err)
	return d, job
}

// DeliveryStatus returns the logged status and last error ("" when none)
// of the delivery id.
func (f *fixture) DeliveryStatus(id string) (string, string) {
	f.t.Helper()
	d, err := f.s.GetDelivery(f.ctx, f.ws.ID, id)
	require.NoError(f.t, err)
	if d.LastError == nil {
		return d.Status, ""
	}
	return d.Status, *d.LastError
}

// ClaimOne claims the one due job of the delivery kind, which must be j.
func (f *fixture) ClaimOne(j *queue.Job) {
	f.t.Helper()
	got := f.Claim("w1", 1, longLease, webhook.JobKind)
	require.Len(f.t, got, 1)
	require.Equal(f.t, j.ID, got[0].ID)
}

func testDeliveries(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWritesRowAndJob", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventCompletionSucceeded)
		d, err := f.s.GetDelivery(f.ctx, f.ws.ID, o.Delivery.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, d.Status)
		assert.Nil(t, d.ApplicationID, "a per-request webhook_url has no application")
		assert.Equal(t, webhook.EventCompletionSucceeded, d.EventType)
		assert.Equal(t, "https://example.com/hook", d.URL)
		assert.JSONEq(t, `{"type":"completion.succeeded","timestamp":"2023-11-14T22:13:20Z","data":{"id":"r1"}}`, string(d.Event))
		assert.Zero(t, d.AttemptCount)
		assert.Empty(t, d.Attempts)

		j := f.GetJob(o.Job.ID)
		assert.Equal(t, queue.StatusQueued, j.Status)
		assert.Equal(t, o.Job.Kind, j.Kind, "the job is written as given")
		assert.Equal(t, o.Job.MaxAttempts, j.MaxAttempts)
		assert.JSONEq(t, string(o.Job.Payload), string(j.Payload))
	})
	run(t, newStore, "CreateAllOrNothing", func(t *testing.T, f *fixture) {
		ok := f.Outgoing("", webhook.EventTaskSucceeded)
		noID := f.Outgoing("", webhook.EventTaskSucceeded)
		noID.Delivery.ID = ""
		noJob := f.Outgoing("", webhook.EventTaskSucceeded)
		noJob.Job = nil
		noKind := f.Outgoing("", webhook.EventTaskSucceeded)
		noKind.Job.Kind = ""
		elsewhere := f.Outgoing("", webhook.EventTaskSucceeded)
		elsewhere.Job.WorkspaceID = f.Workspace("other").ID
		for name, bad := range map[string]webhook.Outgoing{"no id": noID, "no job": noJob, "no kind": noKind,
			"a job of another workspace": elsewhere} {
			requireCode(t, canvas.EINVALID, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{ok, bad}))
			_, err := f.s.GetDelivery(f.ctx, f.ws.ID, ok.Delivery.ID)
			requireCode(t, canvas.ENOTFOUND, err)
			_, err = f.s.GetJob(f.ctx, ok.Job.ID)
			requireCode(t, canvas.ENOTFOUND, err)
			assert.Empty(t, f.Claim("w1", 10, longLease, webhook.JobKind), "with %s, nothing is written", name)
			ok.Job.ID = ""
		}
		require.NoError(t, f.s.CreateDeliveries(f.ctx, nil), "no deliveries write nothing")
		require.NoError(t, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{ok}))
		st, _ := f.DeliveryStatus(ok.Delivery.ID)
		assert.Equal(t, webhook.StatusPending, st)
	})
	run(t, newStore, "CreateConflict", func(t *testing.T, f *fixture) {
		first := f.Delivery("", webhook.EventTaskSucceeded)
		again := f.Outgoing("", webhook.EventTaskSucceeded)
		again.Delivery.ID = first.Delivery.ID
		// A delivery id already in the log.
		requireCode(t, canvas.ECONFLICT, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{again}))
		_, err := f.s.GetJob(f.ctx, again.Job.ID)
		requireCode(t, canvas.ENOTFOUND, err)

		sameJob := f.Outgoing("", webhook.EventTaskSucceeded)
		sameJob.Job.ID = first.Job.ID
		// A job id already taken (a fan-out handled twice).
		requireCode(t, canvas.ECONFLICT, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{sameJob}))
		_, err = f.s.GetDelivery(f.ctx, f.ws.ID, sameJob.Delivery.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "EnqueueJobWritesNoDelivery", func(t *testing.T, f *fixture) {
		// A job is a job, whatever its kind: only the delivery methods
		// write a log row.
		o := f.Outgoing("", webhook.EventTaskSucceeded)
		require.NoError(t, f.s.EnqueueJob(f.ctx, o.Job))
		_, err := f.s.GetDelivery(f.ctx, f.ws.ID, o.Delivery.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
		require.NoError(t, err)
		assert.Zero(t, page.Total)
	})
	run(t, newStore, "RecordAttempt", func(t *testing.T, f *fixture) {
		id := f.Delivery("app-1", webhook.EventCompletionFailed).Delivery.ID
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
		a := f.Delivery("", webhook.EventTaskSucceeded).Delivery.ID
		b := f.Delivery("", webhook.EventTaskFailed).Delivery.ID
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
		id := f.Delivery("", webhook.EventTaskSucceeded).Delivery.ID
		other := f.Workspace("other")
		_, err := f.s.GetDelivery(f.ctx, other.ID, id)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.RequeueDelivery(f.ctx, webhook.RequeueDeliveryParams{WorkspaceID: other.ID, DeliveryID: id,
			Job: func(payload json.RawMessage) *queue.Job {
				return &queue.Job{WorkspaceID: other.ID, Kind: webhook.JobKind, Payload: payload}
			}})
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
			f.Delivery("app-1", webhook.EventCompletionSucceeded).Delivery.ID,
			f.Delivery("app-2", webhook.EventCompletionSucceeded).Delivery.ID,
			f.Delivery("app-1", webhook.EventPublicationCreated).Delivery.ID,
			f.Delivery("", webhook.EventTaskFailed).Delivery.ID,
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
	run(t, newStore, "RequeueSamePayload", func(t *testing.T, f *fixture) {
		first := f.Delivery("app-1", webhook.EventCompletionSucceeded)
		id := first.Delivery.ID
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
			Attempt: &webhook.LoggedAttempt{At: time.Now(), StatusCode: ptr(410)}, Status: webhook.StatusFailed, LastError: "gone"}))
		d, job := f.Redeliver(id)
		assert.Equal(t, webhook.StatusPending, d.Status)
		assert.Len(t, d.Attempts, 1, "earlier attempts stay in the log")
		require.NotNil(t, job)
		assert.JSONEq(t, string(first.Delivery.Payload), string(job.Payload), "the job is made from the stored payload")

		jobs, err := f.s.ClaimJobs(f.ctx, "w", []string{webhook.JobKind}, 10, time.Minute)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the first job and the redelivery")
		var again *queue.Job
		for _, j := range jobs {
			if j.ID != first.Job.ID {
				again = j
			}
		}
		require.NotNil(t, again)
		assert.Equal(t, job.ID, again.ID)
		var sent webhook.Delivery
		require.NoError(t, json.Unmarshal(again.Payload, &sent))
		assert.Equal(t, id, sent.ID, "the same webhook-id")
		assert.JSONEq(t, string(first.Job.Payload), string(again.Payload))
		assert.Equal(t, f.ws.ID, again.WorkspaceID)
		assert.Equal(t, id, again.RefID, "as the job was made")

		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 1, page.Total, "a redelivery is the same delivery")
	})
	run(t, newStore, "RequeueNeedsAJob", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventTaskFailed)
		f.ClaimOne(o.Job)
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: o.Job.ID,
			Owner: "w1", LastError: "attempt 1: timeout"}))
		other := f.Workspace("other")
		for name, job := range map[string]*queue.Job{
			"none":                 nil,
			"of another workspace": {WorkspaceID: other.ID, Kind: webhook.JobKind},
			"without a kind":       {WorkspaceID: f.ws.ID},
		} {
			_, err := f.s.RequeueDelivery(f.ctx, webhook.RequeueDeliveryParams{WorkspaceID: f.ws.ID,
				DeliveryID: o.Delivery.ID, Job: func(json.RawMessage) *queue.Job { return job }})
			requireCode(t, canvas.EINVALID, err)
			st, _ := f.DeliveryStatus(o.Delivery.ID)
			assert.Equal(t, webhook.StatusFailed, st, "a job %s requeues nothing", name)
		}
		assert.Empty(t, f.Claim("w1", 10, longLease, webhook.JobKind))
	})
	run(t, newStore, "EndsWhenItsJobFails", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventTaskFailed)
		f.ClaimOne(o.Job)
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: o.Job.ID,
			Owner: "w1", LastError: "handler panicked"}))
		st, msg := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusFailed, st, "failed by the worker, not the deliverer")
		assert.Equal(t, "handler panicked", msg)
	})
	run(t, newStore, "EndsWhenItsJobSucceeds", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventTaskSucceeded)
		f.ClaimOne(o.Job)
		require.NoError(t, f.s.CompleteJob(f.ctx, o.Job.ID, "w1"))
		st, msg := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusSucceeded, st, "a job succeeds only when the receiver accepted it")
		assert.Empty(t, msg)
	})
	run(t, newStore, "EndKeepsWhatTheDelivererRecorded", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventTaskFailed)
		f.ClaimOne(o.Job)
		require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID,
			DeliveryID: o.Delivery.ID, Attempt: &webhook.LoggedAttempt{At: time.Now(), StatusCode: ptr(410)},
			Status: webhook.StatusFailed, LastError: "receiver answered 410 Gone"}))
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: o.Job.ID,
			Owner: "w1", LastError: "attempt 1: receiver answered 410 Gone"}))
		st, msg := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "receiver answered 410 Gone", msg, "what the deliverer recorded stands")
	})
	run(t, newStore, "EndsWhenItsJobIsCancelled", func(t *testing.T, f *fixture) {
		o := f.Delivery("", webhook.EventTaskSucceeded) // serves "ref"
		n, err := f.s.CancelJobs(f.ctx, "ref")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		st, msg := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "delivery job cancelled", msg)
	})
	run(t, newStore, "EndsWhenItsLastLeaseExpires", func(t *testing.T, f *fixture) {
		o := f.Outgoing("", webhook.EventTaskSucceeded)
		o.Job.MaxAttempts = 1
		require.NoError(t, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{o}))
		require.Len(t, f.Claim("w1", 1, shortLease, webhook.JobKind), 1)
		// The claim that finds the last attempt's lease expired fails the
		// job; no worker is left to record the delivery.
		require.Eventually(t, func() bool {
			f.Claim("w2", 1, longLease, webhook.JobKind)
			return f.GetJob(o.Job.ID).Status == queue.StatusFailed
		}, 5*time.Second, 5*time.Millisecond)
		st, msg := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "lease expired after 1 attempts", msg)
	})
	run(t, newStore, "OtherJobsLeaveItAlone", func(t *testing.T, f *fixture) {
		// Only the jobs written with a delivery serve it: not a job of the
		// same kind and payload enqueued by itself, nor one whose RefID is
		// the delivery's id.
		o := f.Delivery("", webhook.EventTaskSucceeded)
		alike := &queue.Job{WorkspaceID: f.ws.ID, Kind: o.Job.Kind, RefID: o.Delivery.ID, Payload: o.Job.Payload}
		require.NoError(t, f.s.EnqueueJob(f.ctx, alike))
		claimed := f.Claim("w1", 2, longLease, webhook.JobKind)
		require.Len(t, claimed, 2)
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: alike.ID,
			Owner: "w1", LastError: "not the delivery's"}))
		st, _ := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusPending, st)
		require.NoError(t, f.s.CompleteJob(f.ctx, o.Job.ID, "w1"))
		st, _ = f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusSucceeded, st, "the alike job did not hold it pending either")
	})
	run(t, newStore, "PendingWhileRedelivered", func(t *testing.T, f *fixture) {
		first := f.Delivery("", webhook.EventTaskSucceeded)
		id := first.Delivery.ID
		_, again := f.Redeliver(id)
		jobs, err := f.s.ClaimJobs(f.ctx, "w1", []string{webhook.JobKind}, 10, longLease)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: first.Job.ID,
			Owner: "w1", LastError: "attempt 1: timeout"}))
		st, _ := f.DeliveryStatus(id)
		assert.Equal(t, webhook.StatusPending, st, "the redelivery's job still serves it")
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: again.ID,
			Owner: "w1", LastError: "attempt 1: timeout"}))
		st, msg := f.DeliveryStatus(id)
		assert.Equal(t, webhook.StatusFailed, st)
		assert.Equal(t, "attempt 1: timeout", msg)
	})
}
