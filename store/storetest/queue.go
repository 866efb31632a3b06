package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shortLease is a lease that has expired by the time a test checks it;
// tests wait for expiry with require.Eventually, never with a fixed sleep.
const shortLease = time.Millisecond

// longLease is a lease that outlives any test.
const longLease = time.Hour

// Job enqueues a job of kind serving refID, due at runAt (zero: now).
func (f *fixture) Job(kind, refID string, runAt time.Time) *queue.Job {
	f.t.Helper()
	j := &queue.Job{WorkspaceID: f.ws.ID, Kind: kind, RefID: refID, RunAt: runAt}
	require.NoError(f.t, f.s.EnqueueJob(f.ctx, j))
	return j
}

// Claim claims up to n jobs of kinds for owner with lease.
func (f *fixture) Claim(owner string, n int, lease time.Duration, kinds ...string) []*queue.Job {
	f.t.Helper()
	jobs, err := f.s.ClaimJobs(f.ctx, owner, kinds, n, lease)
	require.NoError(f.t, err)
	return jobs
}

// GetJob reads a job that must exist.
func (f *fixture) GetJob(id string) *queue.Job {
	f.t.Helper()
	j, err := f.s.GetJob(f.ctx, id)
	require.NoError(f.t, err)
	return j
}

func jobID(j *queue.Job) string { return j.ID }

func testQueue(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "EnqueueDefaults", func(t *testing.T, f *fixture) {
		before := time.Now().Add(-time.Second)
		j := &queue.Job{WorkspaceID: f.ws.ID, Kind: "completion.run", RefID: "run-1",
			Payload: json.RawMessage(`{"a":1}`)}
		require.NoError(t, f.s.EnqueueJob(f.ctx, j))
		assert.NotEmpty(t, j.ID)
		assert.Equal(t, queue.StatusQueued, j.Status)
		assert.Equal(t, queue.DefaultMaxAttempts, j.MaxAttempts)
		assert.Zero(t, j.Attempts)
		assert.True(t, j.RunAt.After(before), "due now")
		got := f.GetJob(j.ID)
		assert.Equal(t, j.ID, got.ID)
		assert.Equal(t, f.ws.ID, got.WorkspaceID)
		assert.Equal(t, "completion.run", got.Kind)
		assert.Equal(t, "run-1", got.RefID)
		assert.JSONEq(t, `{"a":1}`, string(got.Payload))
		assert.Equal(t, queue.StatusQueued, got.Status)
		assert.Zero(t, got.Attempts)
		assert.Equal(t, queue.DefaultMaxAttempts, got.MaxAttempts)
		assert.True(t, j.RunAt.Equal(got.RunAt))
		assert.Empty(t, got.LeaseOwner)
		assert.Nil(t, got.LeaseUntil)
		assert.Empty(t, got.LastError)
		assert.False(t, got.CreatedAt.IsZero())
		assert.False(t, got.UpdatedAt.IsZero())

		kept := &queue.Job{ID: "job-fixed", Kind: "k", MaxAttempts: 3}
		require.NoError(t, f.s.EnqueueJob(f.ctx, kept))
		got = f.GetJob("job-fixed")
		assert.Equal(t, 3, got.MaxAttempts)
		assert.Nil(t, got.Payload)
	})
	run(t, newStore, "EnqueueInvalid", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.EINVALID, f.s.EnqueueJob(f.ctx, &queue.Job{WorkspaceID: f.ws.ID}))
		j := f.Job("k", "", time.Time{})
		requireCode(t, canvas.ECONFLICT, f.s.EnqueueJob(f.ctx, &queue.Job{ID: j.ID, Kind: "k"}))
	})
	run(t, newStore, "GetJobNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.GetJob(f.ctx, "missing")
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ClaimOrderAndKinds", func(t *testing.T, f *fixture) {
		now := time.Now()
		second := f.Job("a", "", now.Add(-2*time.Second))
		third := f.Job("a", "", now.Add(-time.Second))
		first := f.Job("a", "", now.Add(-3*time.Second))
		other := f.Job("b", "", now.Add(-time.Hour))

		got := f.Claim("w1", 2, longLease, "a")
		require.Len(t, got, 2)
		assert.Equal(t, []string{first.ID, second.ID}, ids(got, jobID), "oldest run_at first")
		for _, j := range got {
			assert.Equal(t, queue.StatusRunning, j.Status)
			assert.Equal(t, 1, j.Attempts)
			assert.Equal(t, "w1", j.LeaseOwner)
			require.NotNil(t, j.LeaseUntil)
			assert.True(t, j.LeaseUntil.After(now.Add(longLease/2)))
		}
		stored := f.GetJob(first.ID)
		assert.Equal(t, queue.StatusRunning, stored.Status)
		assert.Equal(t, "w1", stored.LeaseOwner)

		assert.Equal(t, []string{third.ID}, ids(f.Claim("w2", 5, longLease, "a"), jobID))
		assert.Empty(t, f.Claim("w2", 5, longLease, "a"), "held jobs are not claimed again")
		assert.Empty(t, f.Claim("w2", 5, longLease, "c"))
		assert.Empty(t, f.Claim("w2", 5, longLease), "no kinds, no jobs")
		assert.Equal(t, []string{other.ID}, ids(f.Claim("w2", 5, longLease, "c", "b"), jobID))
	})
	run(t, newStore, "FutureJobNotClaimed", func(t *testing.T, f *fixture) {
		later := f.Job("a", "", time.Now().Add(time.Hour))
		assert.Empty(t, f.Claim("w1", 10, longLease, "a"))
		assert.Equal(t, queue.StatusQueued, f.GetJob(later.ID).Status)
	})
	run(t, newStore, "ConcurrentClaimsAreDisjoint", func(t *testing.T, f *fixture) {
		const jobs, workers = 60, 8
		for range jobs {
			f.Job("a", "", time.Time{})
		}
		var mu sync.Mutex
		claimed := map[string]string{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			owner := fmt.Sprintf("w%d", w)
			wg.Go(func() {
				for {
					got, err := f.s.ClaimJobs(f.ctx, owner, []string{"a"}, 3, longLease)
					if err != nil {
						errs <- err
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, j := range got {
						if prev, ok := claimed[j.ID]; ok {
							errs <- fmt.Errorf("job %s claimed by %s and %s", j.ID, prev, owner)
						}
						claimed[j.ID] = owner
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		assert.Len(t, claimed, jobs)
	})
	run(t, newStore, "Heartbeat", func(t *testing.T, f *fixture) {
		j := f.Job("a", "", time.Time{})
		got := f.Claim("w1", 1, time.Minute, "a")
		require.Len(t, got, 1)
		require.NoError(t, f.s.HeartbeatJob(f.ctx, j.ID, "w1", longLease))
		stored := f.GetJob(j.ID)
		require.NotNil(t, stored.LeaseUntil)
		assert.True(t, stored.LeaseUntil.After(*got[0].LeaseUntil), "extended")
		requireCode(t, canvas.ECONFLICT, f.s.HeartbeatJob(f.ctx, j.ID, "w2", longLease))
		requireCode(t, canvas.ENOTFOUND, f.s.HeartbeatJob(f.ctx, "missing", "w1", longLease))
		queued := f.Job("a", "", time.Now().Add(time.Hour))
		requireCode(t, canvas.ECONFLICT, f.s.HeartbeatJob(f.ctx, queued.ID, "w1", longLease)) // not running
	})
	run(t, newStore, "ExpiredLeaseReclaimed", func(t *testing.T, f *fixture) {
		j := f.Job("a", "", time.Time{})
		require.Len(t, f.Claim("w1", 1, shortLease, "a"), 1)
		var again []*queue.Job
		require.Eventually(t, func() bool {
			again = f.Claim("w2", 1, longLease, "a")
			return len(again) == 1
		}, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, j.ID, again[0].ID)
		assert.Equal(t, 2, again[0].Attempts)
		assert.Equal(t, "w2", again[0].LeaseOwner)
		requireCode(t, canvas.ECONFLICT, f.s.CompleteJob(f.ctx, j.ID, "w1"))
		requireCode(t, canvas.ECONFLICT, f.s.HeartbeatJob(f.ctx, j.ID, "w1", longLease))
		require.NoError(t, f.s.CompleteJob(f.ctx, j.ID, "w2"))
		done := f.GetJob(j.ID)
		assert.Equal(t, queue.StatusSucceeded, done.Status)
		assert.Empty(t, done.LeaseOwner)
		assert.Nil(t, done.LeaseUntil)
		requireCode(t, canvas.ECONFLICT, f.s.CompleteJob(f.ctx, j.ID, "w2")) // no longer running
		requireCode(t, canvas.ENOTFOUND, f.s.CompleteJob(f.ctx, "missing", "w2"))
	})
	run(t, newStore, "RetrySetsRunAtAndError", func(t *testing.T, f *fixture) {
		j := f.Job("a", "", time.Time{})
		require.Len(t, f.Claim("w1", 1, longLease, "a"), 1)
		requireCode(t, canvas.ECONFLICT, f.s.RetryJob(f.ctx, queue.RetryJobParams{ID: j.ID, Owner: "w2", RunAt: time.Now(),
			LastError: "nope"}))
		// A store keeps instants to the microsecond (Postgres's precision).
		runAt := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		require.NoError(t, f.s.RetryJob(f.ctx, queue.RetryJobParams{ID: j.ID, Owner: "w1", RunAt: runAt,
			LastError: "provider timed out"}))
		got := f.GetJob(j.ID)
		assert.Equal(t, queue.StatusQueued, got.Status)
		assert.True(t, runAt.Equal(got.RunAt), "run_at %v, want %v", got.RunAt, runAt)
		assert.Equal(t, "provider timed out", got.LastError)
		assert.Equal(t, 1, got.Attempts)
		assert.Empty(t, got.LeaseOwner)
		assert.Nil(t, got.LeaseUntil)
		assert.Empty(t, f.Claim("w1", 1, longLease, "a"), "not due before run_at")

		require.NoError(t, f.s.EnqueueJob(f.ctx, &queue.Job{ID: "soon", Kind: "b"}))
		require.Len(t, f.Claim("w1", 1, longLease, "b"), 1)
		require.NoError(t, f.s.RetryJob(f.ctx, queue.RetryJobParams{ID: "soon", Owner: "w1", RunAt: time.Now().Add(-time.Second),
			LastError: "again"}))
		again := f.Claim("w2", 1, longLease, "b")
		require.Len(t, again, 1)
		assert.Equal(t, 2, again[0].Attempts)
		assert.Equal(t, "again", again[0].LastError)
	})
	run(t, newStore, "FailIsFinal", func(t *testing.T, f *fixture) {
		j := f.Job("a", "", time.Time{})
		require.Len(t, f.Claim("w1", 1, longLease, "a"), 1)
		requireCode(t, canvas.ECONFLICT, f.s.FailJob(f.ctx, queue.FailJobParams{ID: j.ID,
			Owner: "w2", LastError: "nope"}))
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: j.ID, Owner: "w1", LastError: "schema mismatch"}))
		got := f.GetJob(j.ID)
		assert.Equal(t, queue.StatusFailed, got.Status)
		assert.Equal(t, "schema mismatch", got.LastError)
		assert.Empty(t, f.Claim("w1", 1, longLease, "a"))
		requireCode(t, canvas.ENOTFOUND, f.s.FailJob(f.ctx, queue.FailJobParams{ID: "missing",
			Owner: "w1", LastError: "x"}))
	})
	run(t, newStore, "ReleaseDoesNotCountAttempt", func(t *testing.T, f *fixture) {
		j := f.Job("a", "", time.Time{})
		require.Len(t, f.Claim("w1", 1, longLease, "a"), 1)
		requireCode(t, canvas.ECONFLICT, f.s.ReleaseJob(f.ctx, j.ID, "w2"))
		require.NoError(t, f.s.ReleaseJob(f.ctx, j.ID, "w1"))
		got := f.GetJob(j.ID)
		assert.Equal(t, queue.StatusQueued, got.Status)
		assert.Zero(t, got.Attempts)
		assert.Empty(t, got.LeaseOwner)
		again := f.Claim("w2", 1, longLease, "a")
		require.Len(t, again, 1, "claimable at once")
		assert.Equal(t, 1, again[0].Attempts)
		requireCode(t, canvas.ENOTFOUND, f.s.ReleaseJob(f.ctx, "missing", "w1"))
	})
	run(t, newStore, "CancelByRef", func(t *testing.T, f *fixture) {
		running := f.Job("a", "run-1", time.Now().Add(-time.Minute))
		queued := f.Job("a", "run-1", time.Now().Add(time.Hour))
		other := f.Job("a", "run-2", time.Time{})
		got := f.Claim("w1", 1, longLease, "a")
		require.Len(t, got, 1)
		require.Equal(t, running.ID, got[0].ID)

		n, err := f.s.CancelJobs(f.ctx, "run-1")
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Equal(t, queue.StatusCancelled, f.GetJob(running.ID).Status)
		assert.Equal(t, queue.StatusCancelled, f.GetJob(queued.ID).Status)
		assert.Equal(t, queue.StatusQueued, f.GetJob(other.ID).Status)
		requireCode(t, canvas.ECONFLICT, f.s.HeartbeatJob(f.ctx, running.ID, "w1", longLease)) // the handler learns it
		requireCode(t, canvas.ECONFLICT, f.s.CompleteJob(f.ctx, running.ID, "w1"))

		n, err = f.s.CancelJobs(f.ctx, "run-1")
		require.NoError(t, err)
		assert.Zero(t, n, "already cancelled")
		n, err = f.s.CancelJobs(f.ctx, "missing")
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, []string{other.ID}, ids(f.Claim("w1", 5, longLease, "a"), jobID))
	})
	run(t, newStore, "MaxAttemptsExhaustedOnLeaseExpiry", func(t *testing.T, f *fixture) {
		j := &queue.Job{WorkspaceID: f.ws.ID, Kind: "a", MaxAttempts: 2}
		require.NoError(t, f.s.EnqueueJob(f.ctx, j))
		require.Len(t, f.Claim("w1", 1, shortLease, "a"), 1)
		require.Eventually(t, func() bool { return len(f.Claim("w2", 1, shortLease, "a")) == 1 },
			5*time.Second, 5*time.Millisecond, "second attempt")
		require.Eventually(t, func() bool {
			assert.Empty(t, f.Claim("w3", 1, longLease, "a"), "never a third attempt")
			return f.GetJob(j.ID).Status == queue.StatusFailed
		}, 5*time.Second, 5*time.Millisecond)
		got := f.GetJob(j.ID)
		assert.Equal(t, 2, got.Attempts)
		assert.Equal(t, "lease expired after 2 attempts", got.LastError)
		assert.Empty(t, got.LeaseOwner)
		requireCode(t, canvas.ECONFLICT, f.s.CompleteJob(f.ctx, j.ID, "w2"))
	})
}
