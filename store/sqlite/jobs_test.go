package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
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
	// The test leads the jobs' committer: each call waits in its queue,
	// in the order made, until the test runs them as one batch.
	c := &db.jobCommits
	pending := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pending)
	}
	c.mu.Lock()
	c.leading = true
	c.mu.Unlock()
	calls := []func() error{
		func() error { return db.CompleteJob(ctx, jobs[0].ID, "w1") },
		func() error { return db.CompleteJob(ctx, "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10", "w1") },
		func() error { return db.CompleteJob(ctx, jobs[1].ID, "w2") },
		func() error { return db.CompleteJob(cancelled, jobs[2].ID, "w1") },
		func() error {
			return db.FailJob(ctx, queue.FailJobParams{ID: jobs[1].ID, Owner: "w1", LastError: "x"})
		},
	}
	done := make([]chan error, len(calls))
	for i, call := range calls {
		done[i] = make(chan error, 1)
		go func() { done[i] <- call() }()
		require.Eventually(t, func() bool { return pending() == i+1 }, 10*time.Second, time.Millisecond)
	}
	db.commitBatches(c)
	errs := make([]error, len(calls))
	for i := range calls {
		errs[i] = <-done[i]
	}
	require.Zero(t, pending())
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
		go func() { errs <- db.FailJob(ctx, queue.FailJobParams{ID: j.ID, Owner: "other", LastError: "not mine"}) }()
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

// TestDB_ClaimPlan checks that the claim's statements read the jobs in the
// order of an index and stop at the limit: no temporary B-tree (a sort of
// every due job) and no scan of the whole table, only of a partial index
// of live jobs.
func TestDB_ClaimPlan(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	now := formatTime(db.Now())
	writes, anyDue := sqlstore.SQLite.ClaimQueries()
	exhaust, dueQueued, dueExpired, claim := writes[0], writes[1], writes[2], writes[3]
	for _, tc := range []struct {
		name, q, index string
		args           []any
	}{
		{"DueQueued", dueQueued, "jobs_queued", []any{now, idList([]string{"a"}), 32}},
		{"DueExpired", dueExpired, "jobs_running", []any{now, idList([]string{"a"}), 32}},
		{"AnyDue", anyDue, "jobs_queued", []any{now, now}},
		{"Exhaust", exhaust, "jobs_running", []any{now, now}},
		{"Claim", claim, "sqlite_autoindex_jobs_1", []any{"w1", now, now, idList([]string{"x"}), now, now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := db.read.Query(`EXPLAIN QUERY PLAN `+tc.q, tc.args...)
			details, err := sqlstore.RowsOf(sqlRows{rows}, err, func(r sqlstore.Rows) (string, error) {
				var id, parent, unused int
				var detail string
				return detail, r.Scan(&id, &parent, &unused, &detail)
			})
			require.NoError(t, err)
			plan := strings.Join(details, "\n")
			t.Log(plan)
			assert.Contains(t, plan, "INDEX "+tc.index)
			assert.NotContains(t, plan, "TEMP B-TREE")
			for _, d := range details {
				assert.NotEqual(t, "SCAN jobs", d, "a scan of the whole table")
			}
		})
	}
}

// TestDB_ClaimJobsOrder claims across both sets of due jobs, queued ones
// and running ones whose lease expired, oldest RunAt first, then oldest
// CreatedAt, whichever set each comes from, and only of the kinds asked.
func TestDB_ClaimJobsOrder(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	db.Now = func() time.Time { return now }
	enqueue := func(kind string, runAt time.Duration) *queue.Job {
		t.Helper()
		j := &queue.Job{Kind: kind, RunAt: t0.Add(runAt)}
		require.NoError(t, db.EnqueueJob(ctx, j))
		now = now.Add(time.Millisecond) // each job created after the last
		return j
	}
	ids := func(jobs []*queue.Job) []string {
		out := make([]string, len(jobs))
		for i, j := range jobs {
			out[i] = j.ID
		}
		return out
	}
	claim := func(owner string, n int, kinds ...string) []string {
		t.Helper()
		jobs, err := db.ClaimJobs(ctx, owner, kinds, n, time.Minute)
		require.NoError(t, err)
		return ids(jobs)
	}

	q1 := enqueue("a", -5*time.Minute)
	q2 := enqueue("a", -3*time.Minute)
	other := enqueue("b", -6*time.Minute)
	require.Equal(t, []string{q1.ID, q2.ID}, claim("w1", 2, "a"))
	require.NoError(t, db.CompleteJob(ctx, q1.ID, "w1"))
	q0 := enqueue("a", -4*time.Minute)
	q3 := enqueue("a", -time.Minute)
	q4 := enqueue("a", -time.Minute) // same RunAt as q3, created after it
	enqueue("a", time.Hour)          // not due

	now = t0.Add(2 * time.Minute) // q2's lease has expired
	assert.Equal(t, []string{q0.ID, q2.ID, q3.ID}, claim("w2", 3, "a"),
		"queued q0, then the expired q2, then queued q3")
	assert.Equal(t, []string{q4.ID}, claim("w2", 5, "a"))
	assert.Equal(t, []string{other.ID}, claim("w2", 5, "a", "b"))
	got, err := db.GetJob(ctx, q2.ID)
	require.NoError(t, err)
	assert.Equal(t, "w2", got.LeaseOwner)
	assert.Equal(t, 2, got.Attempts)
}
