package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const waitFor, tick = 10 * time.Second, 2 * time.Millisecond

// mustOpen opens a fresh SQLite store at path, closed at cleanup.
func mustOpen(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// mustNewDB opens a fresh SQLite store in a temporary directory.
func mustNewDB(t *testing.T) *sqlite.DB { return mustOpen(t, filepath.Join(t.TempDir(), "queue.db")) }

// fastOptions are worker options that keep tests quick.
func fastOptions() queue.WorkerOptions {
	return queue.WorkerOptions{PollInterval: 5 * time.Millisecond, Lease: 2 * time.Second,
		Backoff: func(int) time.Duration { return 0 }}
}

// mustStart runs w until the returned stop is called (or the test ends); stop
// waits for Run to return.
func mustStart(t *testing.T, w *queue.Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-returned)
		})
	}
	t.Cleanup(stop)
	return stop
}

// mustEnqueue enqueues j.
func mustEnqueue(t *testing.T, db *sqlite.DB, j *queue.Job) *queue.Job {
	t.Helper()
	require.NoError(t, db.EnqueueJob(context.Background(), j))
	return j
}

// mustWaitJob waits until the job satisfies ok and returns it.
func mustWaitJob(t *testing.T, db *sqlite.DB, id string, ok func(j *queue.Job) bool) *queue.Job {
	t.Helper()
	var j *queue.Job
	require.Eventually(t, func() bool {
		var err error
		j, err = db.GetJob(context.Background(), id)
		return err == nil && ok(j)
	}, waitFor, tick)
	return j
}

func hasStatus(s string) func(*queue.Job) bool {
	return func(j *queue.Job) bool { return j.Status == s }
}

func TestWorker_Run(t *testing.T) {
	t.Parallel()
	for name, fn := range map[string]func(*testing.T){
		"Cancelled": testCancelled, "Shutdown": testShutdown, "Crash": testCrash,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t)
		})
	}
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		var got atomic.Value
		w.Handle("greet", func(ctx context.Context, j *queue.Job) error {
			got.Store(string(j.Payload))
			return nil
		})
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "greet", Payload: json.RawMessage(`{"name":"ada"}`)})
		w.Notify()
		done := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
		assert.Equal(t, 1, done.Attempts)
		assert.Empty(t, done.LastError)
		assert.JSONEq(t, `{"name":"ada"}`, got.Load().(string))
	})
	t.Run("RetryThenSuccess", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		var calls atomic.Int32
		w.Handle("flaky", func(ctx context.Context, j *queue.Job) error {
			if calls.Add(1) == 1 {
				return errors.New("provider unavailable")
			}
			return nil
		})
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "flaky"})
		done := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
		assert.Equal(t, 2, done.Attempts)
		assert.Equal(t, int32(2), calls.Load())
		assert.Equal(t, "provider unavailable", done.LastError, "the last failure stays recorded")
	})
	t.Run("Permanent", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		var calls atomic.Int32
		w.Handle("bad", func(ctx context.Context, j *queue.Job) error {
			calls.Add(1)
			return queue.Permanent(errors.New("output does not match the schema"))
		})
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "bad"})
		done := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusFailed))
		assert.Equal(t, 1, done.Attempts)
		assert.Equal(t, "output does not match the schema", done.LastError)
		assert.Equal(t, int32(1), calls.Load())
	})
	t.Run("MaxAttempts", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		w.Handle("doomed", func(ctx context.Context, j *queue.Job) error { return errors.New("timeout") })
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "doomed", MaxAttempts: 3})
		done := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusFailed))
		assert.Equal(t, 3, done.Attempts)
		assert.Contains(t, done.LastError, "timeout")
		assert.Contains(t, done.LastError, "gave up after 3 attempts")
	})
	t.Run("BackoffHonoured", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		opts := fastOptions()
		opts.Now = func() time.Time { return now }
		var attempts []int
		var mu sync.Mutex
		opts.Backoff = func(attempt int) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, attempt)
			return 7 * time.Minute
		}
		w := queue.NewWorker(db, opts)
		w.Handle("slow", func(ctx context.Context, j *queue.Job) error { return errors.New("busy") })
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "slow"})
		got := mustWaitJob(t, db, j.ID, func(j *queue.Job) bool { return j.LastError != "" })
		assert.Equal(t, queue.StatusQueued, got.Status)
		assert.Equal(t, 1, got.Attempts)
		assert.True(t, got.RunAt.Equal(now.Add(7*time.Minute)), "run_at %v", got.RunAt)
		assert.Equal(t, "busy", got.LastError)
		mu.Lock()
		assert.Equal(t, []int{1}, attempts)
		mu.Unlock()
	})
	t.Run("RetryAfterHonoured", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		opts := fastOptions()
		opts.Now = func() time.Time { return now }
		var backoffs atomic.Int32
		opts.Backoff = func(int) time.Duration { backoffs.Add(1); return 0 }
		w := queue.NewWorker(db, opts)
		w.Handle("limited", func(ctx context.Context, j *queue.Job) error {
			return queue.RetryAfter(errors.New("429 Too Many Requests"), 90*time.Second)
		})
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "limited"})
		got := mustWaitJob(t, db, j.ID, func(j *queue.Job) bool { return j.LastError != "" })
		assert.Equal(t, queue.StatusQueued, got.Status)
		assert.True(t, got.RunAt.Equal(now.Add(90*time.Second)), "run_at %v", got.RunAt)
		assert.Equal(t, "429 Too Many Requests", got.LastError)
		assert.Zero(t, backoffs.Load(), "RetryAfter replaces the backoff")
	})
	t.Run("PanicRecovered", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		var calls atomic.Int32
		w.Handle("fragile", func(ctx context.Context, j *queue.Job) error {
			if calls.Add(1) == 1 {
				panic("nil map")
			}
			return nil
		})
		w.Handle("broken", func(ctx context.Context, j *queue.Job) error { panic("always") })
		mustStart(t, w)
		fragile := mustEnqueue(t, db, &queue.Job{Kind: "fragile"})
		broken := mustEnqueue(t, db, &queue.Job{Kind: "broken", MaxAttempts: 1})
		done := mustWaitJob(t, db, fragile.ID, hasStatus(queue.StatusSucceeded))
		assert.Equal(t, 2, done.Attempts, "retried after the panic")
		failed := mustWaitJob(t, db, broken.ID, hasStatus(queue.StatusFailed))
		assert.Contains(t, failed.LastError, "panicked: always")
	})
	t.Run("ConcurrencyLimit", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		opts := fastOptions()
		opts.Concurrency = 2
		w := queue.NewWorker(db, opts)
		var active, peak atomic.Int32
		gate := make(chan struct{})
		w.Handle("work", func(ctx context.Context, j *queue.Job) error {
			n := active.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			defer active.Add(-1)
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		var jobs []*queue.Job
		for range 6 {
			jobs = append(jobs, mustEnqueue(t, db, &queue.Job{Kind: "work"}))
		}
		mustStart(t, w)
		for range jobs {
			require.Eventually(t, func() bool { return active.Load() == 2 || allDone(db, jobs, 5) }, waitFor, tick)
			gate <- struct{}{}
		}
		for _, j := range jobs {
			mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
		}
		assert.Equal(t, int32(2), peak.Load())
	})
}

// allDone reports whether at least n of jobs succeeded.
func allDone(db *sqlite.DB, jobs []*queue.Job, n int) bool {
	done := 0
	for _, j := range jobs {
		if got, err := db.GetJob(context.Background(), j.ID); err == nil && got.Status == queue.StatusSucceeded {
			done++
		}
	}
	return done >= n
}

// testCancelled shows that CancelJobs stops a running handler: its
// heartbeat gets CONFLICT and its context is cancelled.
func testCancelled(t *testing.T) {
	db := mustNewDB(t)
	opts := fastOptions()
	opts.Lease, opts.Heartbeat = time.Second, 5*time.Millisecond
	w := queue.NewWorker(db, opts)
	started, stopped := make(chan struct{}), make(chan error, 1)
	w.Handle("long", func(ctx context.Context, j *queue.Job) error {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return ctx.Err()
	})
	stop := mustStart(t, w)
	j := mustEnqueue(t, db, &queue.Job{Kind: "long", RefID: "run-1"})
	<-started
	n, err := db.CancelJobs(context.Background(), "run-1")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.ErrorIs(t, <-stopped, context.Canceled, "the handler's context is done")
	stop()
	got, err := db.GetJob(context.Background(), j.ID)
	require.NoError(t, err)
	assert.Equal(t, queue.StatusCancelled, got.Status, "the outcome of a cancelled job is dropped")
	assert.Equal(t, 1, got.Attempts)
}

// testShutdown shows the graceful shutdown: Run waits for a handler that
// finishes within ShutdownTimeout and releases one that does not.
func testShutdown(t *testing.T) {
	db := mustNewDB(t)
	opts := fastOptions()
	opts.ShutdownTimeout = time.Second
	w := queue.NewWorker(db, opts)
	release := make(chan struct{})
	var shortStarted, longStarted sync.WaitGroup
	shortStarted.Add(1)
	longStarted.Add(1)
	longErr := make(chan error, 1)
	w.Handle("short", func(ctx context.Context, j *queue.Job) error {
		shortStarted.Done()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	w.Handle("long", func(ctx context.Context, j *queue.Job) error {
		longStarted.Done()
		<-ctx.Done()
		longErr <- ctx.Err()
		return ctx.Err()
	})
	short := mustEnqueue(t, db, &queue.Job{Kind: "short"})
	long := mustEnqueue(t, db, &queue.Job{Kind: "long"})
	stop := mustStart(t, w)
	shortStarted.Wait()
	longStarted.Wait()

	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	close(release) // the short handler finishes while Run waits
	<-stopped
	assert.ErrorIs(t, <-longErr, context.Canceled, "the long handler is cancelled after the timeout")

	got, err := db.GetJob(context.Background(), short.ID)
	require.NoError(t, err)
	assert.Equal(t, queue.StatusSucceeded, got.Status)
	got, err = db.GetJob(context.Background(), long.ID)
	require.NoError(t, err)
	assert.Equal(t, queue.StatusQueued, got.Status, "released")
	assert.Zero(t, got.Attempts, "a released claim is not an attempt")
	again, err := db.ClaimJobs(context.Background(), "next", []string{"long"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, again, 1, "claimable at once")
	assert.Equal(t, 1, again[0].Attempts)
}

func TestWorker_Handle(t *testing.T) {
	t.Parallel()
	t.Run("Duplicate", func(t *testing.T) {
		t.Parallel()
		w := queue.NewWorker(mustNewDB(t), fastOptions())
		w.Handle("k", func(context.Context, *queue.Job) error { return nil })
		assert.Panics(t, func() { w.Handle("k", func(context.Context, *queue.Job) error { return nil }) })
	})
	t.Run("AfterRun", func(t *testing.T) {
		t.Parallel()
		w := queue.NewWorker(mustNewDB(t), fastOptions())
		stop := mustStart(t, w)
		n := 0
		require.Eventually(t, func() bool {
			n++
			return panics(func() { w.Handle(fmt.Sprint("k", n), nil) })
		}, waitFor, tick)
		stop()
	})
}

func panics(fn func()) (did bool) {
	defer func() { did = recover() != nil }()
	fn()
	return false
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	for attempt, ceiling := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second,
		4: 8 * time.Second, 10: 10 * time.Minute, 50: 10 * time.Minute} {
		for range 100 {
			d := queue.DefaultBackoff(attempt)
			assert.GreaterOrEqual(t, d, time.Duration(0))
			assert.LessOrEqual(t, d, ceiling, "attempt %d", attempt)
		}
	}
}
