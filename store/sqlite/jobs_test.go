package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDB_JobOutcomeBatch runs several job outcomes in one group commit:
// each fails alone (NOT_FOUND, CONFLICT, a cancelled caller) and the others
// are committed together.
func TestDB_JobOutcomeBatch(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	var jobs [3]*queue.Job
	for i := range jobs {
		jobs[i] = &queue.Job{Kind: "noop"}
		require.NoError(t, db.EnqueueJob(ctx, jobs[i]))
	}
	claimed, err := db.ClaimJobs(ctx, "w1", []string{"noop"}, 3, time.Minute)
	require.NoError(t, err)
	require.Len(t, claimed, 3)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	write := func(set, id, owner string) func(context.Context, *Tx) error {
		return func(ctx context.Context, tx *Tx) error { return leasedTx(ctx, tx, set, id, owner, nil) }
	}
	const complete = `status = 'succeeded', lease_owner = NULL, lease_until = NULL, updated_at = ?3`
	batch := []*commitRequest{
		{ctx: ctx, write: write(complete, jobs[0].ID, "w1")},
		{ctx: ctx, write: write(complete, "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10", "w1")},
		{ctx: ctx, write: write(complete, jobs[1].ID, "w2")},
		{ctx: cancelled, write: write(complete, jobs[2].ID, "w1")},
		{ctx: ctx, write: write(`status = 'failed', last_error = 'x', updated_at = ?3`, jobs[1].ID, "w1")},
	}
	for _, req := range batch {
		req.done = make(chan error, 1)
	}
	db.commitBatch(batch)
	errs := make([]error, len(batch))
	for i, req := range batch {
		errs[i] = <-req.done
	}
	require.NoError(t, errs[0])
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(errs[1]), "a missing job fails alone")
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(errs[2]), "a lost lease fails alone")
	assert.ErrorIs(t, errs[3], context.Canceled)
	require.NoError(t, errs[4])

	want := map[string]string{jobs[0].ID: queue.StatusSucceeded, jobs[1].ID: queue.StatusFailed, jobs[2].ID: queue.StatusRunning}
	for id, status := range want {
		j, err := db.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, status, j.Status, id)
	}
}

// TestDB_JobOutcomesConcurrent records many outcomes at once through the
// public methods, which share commits, and checks that each caller got its
// own answer.
func TestDB_JobOutcomesConcurrent(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	const n = 40
	for range n {
		require.NoError(t, db.EnqueueJob(ctx, &queue.Job{Kind: "noop"}))
	}
	claimed, err := db.ClaimJobs(ctx, "w1", []string{"noop"}, n, time.Minute)
	require.NoError(t, err)
	require.Len(t, claimed, n)
	errs := make(chan error, 2*n)
	for i, j := range claimed {
		go func() {
			if i%2 == 0 {
				errs <- db.CompleteJob(ctx, j.ID, "w1")
			} else {
				errs <- db.HeartbeatJob(ctx, j.ID, "w1", time.Minute)
			}
		}()
		go func() { errs <- db.FailJob(ctx, j.ID, "other", "not mine") }()
	}
	var ok, conflicts int
	for range 2 * n {
		switch err := <-errs; canvas.ErrorCode(err) {
		case "":
			require.NoError(t, err)
			ok++
		case canvas.ECONFLICT:
			conflicts++
		default:
			t.Fatal(err)
		}
	}
	assert.Equal(t, n, ok)
	assert.Equal(t, n, conflicts)
	for i, j := range claimed {
		got, err := db.GetJob(ctx, j.ID)
		require.NoError(t, err)
		if i%2 == 0 {
			assert.Equal(t, queue.StatusSucceeded, got.Status)
		} else {
			assert.Equal(t, queue.StatusRunning, got.Status)
		}
	}
}
