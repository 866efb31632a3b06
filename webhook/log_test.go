package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two whsec_ secrets of a subscription in rotation.
const (
	oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	newSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
)

// subscriptions is an in-memory SubscriptionStore that applies outcomes as
// the contract says and remembers them.
type subscriptions struct {
	mu       sync.Mutex
	targets  map[string]*webhook.SubscriptionTarget
	reasons  []string
	outcomes []bool
}

func newSubscriptions(targets ...*webhook.SubscriptionTarget) *subscriptions {
	s := &subscriptions{targets: map[string]*webhook.SubscriptionTarget{}}
	for _, t := range targets {
		s.targets[t.ApplicationID] = t
	}
	return s
}

func (s *subscriptions) SubscriptionTarget(_ context.Context, id string) (*webhook.SubscriptionTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.targets[id]
	if !ok {
		return nil, canvas.NotFound("application")
	}
	copied := *t
	return &copied, nil
}

func (s *subscriptions) RecordSubscriptionOutcome(_ context.Context, id string, succeeded, disable bool, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.targets[id]
	s.outcomes = append(s.outcomes, succeeded)
	if succeeded {
		t.ConsecutiveFailures = 0
		return nil
	}
	t.ConsecutiveFailures++
	if disable {
		t.Enabled = false
		s.reasons = append(s.reasons, reason)
	}
	return nil
}

func (s *subscriptions) target(id string) webhook.SubscriptionTarget {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.targets[id]
}

// openDB opens a fresh SQLite store.
func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// enqueueFor writes the delivery of a subscription's notification to url,
// its job and its log row, and returns the job claimed as attempt n.
func enqueueFor(t *testing.T, db *sqlite.DB, appID, url string, n int) *queue.Job {
	t.Helper()
	d := testDelivery(url)
	d.ID, d.ApplicationID = "", appID
	o, err := webhook.NewOutgoing("ws1", "run1", *d)
	require.NoError(t, err)
	require.NoError(t, db.CreateDeliveries(context.Background(), []webhook.Outgoing{o}))
	o.Job.Attempts = n
	return o.Job
}

// logged returns the delivery log row of job j.
func logged(t *testing.T, db *sqlite.DB, j *queue.Job) *webhook.LoggedDelivery {
	t.Helper()
	var d webhook.Delivery
	require.NoError(t, json.Unmarshal(j.Payload, &d))
	ld, err := db.GetDelivery(context.Background(), j.WorkspaceID, d.ID)
	require.NoError(t, err)
	return ld
}

// verify checks a received request's signature with the Standard Webhooks
// library under secret.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	assert.NoError(t, wh.Verify(r.Body, r.Header), "signature under %s", secret)
}

func TestDeliverer_Subscription(t *testing.T) {
	live := func(enabled bool, failures int) *webhook.SubscriptionTarget {
		return &webhook.SubscriptionTarget{ApplicationID: "app1", Enabled: enabled, ConsecutiveFailures: failures,
			Secrets: []webhook.Secret{{Value: newSecret}, {Value: oldSecret}}}
	}
	t.Run("SignedWithEveryLiveSecret", func(t *testing.T) {
		rc := newReceiver(t, http.StatusNoContent)
		db, subs := openDB(t), newSubscriptions(live(true, 0))
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: subs}
		j := enqueueFor(t, db, "app1", rc.URL, 1)
		require.NoError(t, d.Handle(context.Background(), j))
		got := rc.requests()
		require.Len(t, got, 1)
		verify(t, newSecret, got[0])
		verify(t, oldSecret, got[0])
		ld := logged(t, db, j)
		assert.Equal(t, webhook.StatusSucceeded, ld.Status)
		require.Len(t, ld.Attempts, 1)
		assert.Equal(t, http.StatusNoContent, *ld.Attempts[0].StatusCode)
		assert.Nil(t, ld.Attempts[0].Error)
		assert.Empty(t, subs.outcomes, "no failure count to reset")
	})
	t.Run("Disabled", func(t *testing.T) {
		rc := newReceiver(t)
		db, subs := openDB(t), newSubscriptions(live(false, 0))
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: subs}
		j := enqueueFor(t, db, "app1", rc.URL, 1)
		err := d.Handle(context.Background(), j)
		assert.True(t, queue.IsPermanent(err), "the job ends: %v", err)
		assert.Empty(t, rc.requests(), "nothing is sent")
		ld := logged(t, db, j)
		assert.Equal(t, webhook.StatusFailed, ld.Status)
		assert.Empty(t, ld.Attempts)
		require.NotNil(t, ld.LastError)
		assert.Equal(t, webhook.ReasonSubscriptionDisabled, *ld.LastError)
	})
	t.Run("GoneDisables", func(t *testing.T) {
		rc := newReceiver(t, http.StatusGone)
		db, subs := openDB(t), newSubscriptions(live(true, 0))
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: subs}
		j := enqueueFor(t, db, "app1", rc.URL, 1)
		assert.True(t, queue.IsPermanent(d.Handle(context.Background(), j)))
		assert.False(t, subs.target("app1").Enabled)
		assert.Equal(t, []string{"receiver answered 410 Gone"}, subs.reasons)
		assert.Equal(t, webhook.StatusFailed, logged(t, db, j).Status)
	})
	t.Run("FailuresInARowDisable", func(t *testing.T) {
		rc := newReceiver(t, http.StatusInternalServerError)
		db, subs := openDB(t), newSubscriptions(live(true, 0))
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: subs, MaxConsecutiveFailures: 3}

		j := enqueueFor(t, db, "app1", rc.URL, 1)
		require.Error(t, d.Handle(context.Background(), j))
		assert.Equal(t, webhook.StatusPending, logged(t, db, j).Status, "a retry follows")
		assert.Empty(t, subs.outcomes, "a delivery that will be retried has not failed yet")

		for i := 1; i <= 3; i++ {
			j := enqueueFor(t, db, "app1", rc.URL, len(webhook.RetrySchedule())+1)
			require.Error(t, d.Handle(context.Background(), j), "the last allowed attempt")
			ld := logged(t, db, j)
			assert.Equal(t, webhook.StatusFailed, ld.Status)
			require.NotNil(t, ld.LastError)
			assert.Contains(t, *ld.LastError, "500")
			assert.Equal(t, i, subs.target("app1").ConsecutiveFailures)
		}
		assert.False(t, subs.target("app1").Enabled, "the third final failure in a row disables")
		require.Len(t, subs.reasons, 1)
		assert.Contains(t, subs.reasons[0], "3 deliveries in a row failed")
	})
	t.Run("SuccessResetsCount", func(t *testing.T) {
		rc := newReceiver(t, http.StatusOK)
		db, subs := openDB(t), newSubscriptions(live(true, 4))
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: subs}
		require.NoError(t, d.Handle(context.Background(), enqueueFor(t, db, "app1", rc.URL, 1)))
		assert.Equal(t, []bool{true}, subs.outcomes)
		assert.Zero(t, subs.target("app1").ConsecutiveFailures)
	})
	t.Run("ApplicationGone", func(t *testing.T) {
		rc := newReceiver(t)
		db := openDB(t)
		d := &webhook.Deliverer{Sender: localSender(), Log: db, Subscriptions: newSubscriptions()}
		j := enqueueFor(t, db, "app1", rc.URL, 1)
		assert.True(t, queue.IsPermanent(d.Handle(context.Background(), j)))
		assert.Empty(t, rc.requests())
		assert.Equal(t, webhook.StatusFailed, logged(t, db, j).Status)
	})
}

func TestDeliverer_Log(t *testing.T) {
	t.Run("ReceiverDownForAWhile", func(t *testing.T) {
		// The receiver fails its first 25 requests, then recovers: every
		// notification arrives, signed, and the log shows each attempt.
		const n = 10
		statuses := make([]int, 26)
		for i := range 25 {
			statuses[i] = http.StatusServiceUnavailable
		}
		statuses[25] = http.StatusOK
		rc := newReceiver(t, statuses...)
		db := openDB(t)
		startWorker(t, db, &webhook.Deliverer{Sender: localSender(), Schedule: []time.Duration{time.Millisecond}, Log: db})
		ids := map[string]bool{}
		var jobs []*queue.Job
		for range n {
			del := testDelivery(rc.URL)
			del.ID, del.Secret = "", newSecret
			o, err := webhook.NewOutgoing("ws1", "run1", *del)
			require.NoError(t, err)
			require.NoError(t, db.CreateDeliveries(context.Background(), []webhook.Outgoing{o}))
			jobs = append(jobs, o.Job)
		}
		attempts := 0
		for _, j := range jobs {
			assert.Equal(t, queue.StatusSucceeded, waitDone(t, db, j.ID).Status)
			ld := logged(t, db, j)
			assert.Equal(t, webhook.StatusSucceeded, ld.Status)
			assert.Equal(t, ld.AttemptCount, len(ld.Attempts))
			attempts += ld.AttemptCount
			ids[ld.ID] = false
		}
		got := rc.requests()
		assert.Equal(t, 25+n, attempts, "each request is one logged attempt")
		assert.Len(t, got, attempts)
		for _, r := range got {
			verify(t, newSecret, r)
			ids[r.Header.Get("webhook-id")] = true
		}
		for id, seen := range ids {
			assert.True(t, seen, "delivery %s arrived", id)
		}
	})
}

// startWorker runs a queue worker on db that delivers webhooks with d until
// the test ends.
func startWorker(t *testing.T, db *sqlite.DB, d *webhook.Deliverer) {
	t.Helper()
	w := queue.NewWorker(db, queue.WorkerOptions{PollInterval: 5 * time.Millisecond, Lease: 5 * time.Second, Concurrency: 8})
	w.Handle(webhook.JobKind, d.Handle)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-stopped)
	})
}
