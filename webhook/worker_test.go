package webhook_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWorker runs a queue worker on a fresh SQLite store that delivers
// webhooks with d, retrying after a millisecond, until the test ends.
func runWorker(t *testing.T, d *webhook.Deliverer) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	w := queue.NewWorker(db, queue.WorkerOptions{PollInterval: 5 * time.Millisecond, Lease: 5 * time.Second})
	w.Handle(webhook.JobKind, d.Handle)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-stopped)
		db.Close()
	})
	return db
}

// waitDone waits until the job is no longer queued or running.
func waitDone(t *testing.T, db *sqlite.DB, id string) *queue.Job {
	t.Helper()
	var j *queue.Job
	require.Eventually(t, func() bool {
		var err error
		j, err = db.GetJob(context.Background(), id)
		return err == nil && (j.Status == queue.StatusSucceeded || j.Status == queue.StatusFailed)
	}, 10*time.Second, 2*time.Millisecond)
	return j
}

func TestDeliverer_Worker(t *testing.T) {
	fast := func() *webhook.Deliverer {
		return &webhook.Deliverer{Sender: localSender(), Schedule: []time.Duration{time.Millisecond}}
	}
	enqueue := func(t *testing.T, db *sqlite.DB, url string) *queue.Job {
		t.Helper()
		d := testDelivery(url)
		d.ID = ""
		o, err := webhook.NewOutgoing("ws1", "run1", *d)
		require.NoError(t, err)
		require.NoError(t, db.CreateDeliveries(context.Background(), []webhook.Outgoing{o}))
		return o.Job
	}
	t.Run("DeliveredOnRetry", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
		db := runWorker(t, fast())
		j := waitDone(t, db, enqueue(t, db, rc.URL).ID)
		assert.Equal(t, queue.StatusSucceeded, j.Status)
		assert.Equal(t, 2, j.Attempts)
		assert.Contains(t, j.LastError, "500", "the failed attempt is recorded")
		got := rc.requests()
		require.Len(t, got, 2)
		assert.NotEmpty(t, got[0].Header.Get("webhook-id"))
		assert.Equal(t, got[0].Header.Get("webhook-id"), got[1].Header.Get("webhook-id"), "webhook-id is stable across retries")
		assert.Equal(t, string(got[0].Body), string(got[1].Body))
	})
	t.Run("GoneFailsAtOnce", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, http.StatusGone)
		db := runWorker(t, fast())
		j := waitDone(t, db, enqueue(t, db, rc.URL).ID)
		assert.Equal(t, queue.StatusFailed, j.Status)
		assert.Equal(t, 1, j.Attempts)
		assert.Contains(t, j.LastError, "410")
		assert.Len(t, rc.requests(), 1)
	})
	t.Run("GivesUpAfterSchedule", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, http.StatusBadGateway)
		db := runWorker(t, fast())
		j := waitDone(t, db, enqueue(t, db, rc.URL).ID)
		assert.Equal(t, queue.StatusFailed, j.Status)
		assert.Equal(t, len(webhook.RetrySchedule())+1, j.Attempts, "one attempt, then a retry per step of the schedule")
		assert.Len(t, rc.requests(), j.Attempts)
	})
	t.Run("GuardRefusesLoopback", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t)
		db := runWorker(t, &webhook.Deliverer{Sender: webhook.NewSender(webhook.SenderOptions{})})
		j := waitDone(t, db, enqueue(t, db, rc.URL).ID)
		assert.Equal(t, queue.StatusFailed, j.Status)
		assert.Contains(t, j.LastError, "not a public address")
		assert.Empty(t, rc.requests())
	})
}
