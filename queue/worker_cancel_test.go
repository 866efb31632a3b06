package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorker_Cancel(t *testing.T) {
	t.Parallel()
	db := mustNewDB(t)
	opts := fastOptions()
	// A lease far longer than the test: only Cancel can stop the handler
	// before its first heartbeat.
	opts.Lease = 10 * time.Minute
	opts.ShutdownTimeout = time.Millisecond // the other handler blocks until stopped
	w := queue.NewWorker(db, opts)
	started := make(chan string, 2)
	stopped := make(chan string, 2)
	w.Handle("slow", func(ctx context.Context, j *queue.Job) error {
		started <- j.RefID
		<-ctx.Done()
		stopped <- j.RefID
		return ctx.Err()
	})
	mustStart(t, w)
	target := mustEnqueue(t, db, &queue.Job{Kind: "slow", RefID: "gen-1"})
	other := mustEnqueue(t, db, &queue.Job{Kind: "slow", RefID: "gen-2"})
	w.Notify()
	got := map[string]bool{<-started: true, <-started: true}
	require.Equal(t, map[string]bool{"gen-1": true, "gen-2": true}, got)

	assert.Zero(t, w.Cancel(""), "an empty ref cancels nothing")
	assert.Zero(t, w.Cancel("unknown"))
	n, err := db.CancelJobs(context.Background(), "gen-1")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, 1, w.Cancel("gen-1"))
	assert.Equal(t, "gen-1", <-stopped, "only the cancelled ref's handler stops")

	cancelled := mustWaitJob(t, db, target.ID, hasStatus(queue.StatusCancelled))
	assert.Equal(t, 1, cancelled.Attempts, "the cancelled job is not retried")
	j, err := db.GetJob(context.Background(), other.ID)
	require.NoError(t, err)
	assert.Equal(t, queue.StatusRunning, j.Status, "the other job keeps running")
}
