package queue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe is a handler that counts its running jobs, keeps their peak, and
// blocks each job until the test lets it go through gate or closes release.
type probe struct {
	active, peak, finished atomic.Int32
	gate, release          chan struct{}
}

func newProbe() *probe { return &probe{gate: make(chan struct{}), release: make(chan struct{})} }

func (p *probe) handle(ctx context.Context, j *queue.Job) error {
	n := p.active.Add(1)
	for m := p.peak.Load(); n > m && !p.peak.CompareAndSwap(m, n); m = p.peak.Load() {
	}
	defer p.active.Add(-1)
	select {
	case <-p.gate:
	case <-p.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.finished.Add(1)
	return nil
}

// mustEnqueueN enqueues n jobs of kind.
func mustEnqueueN(t *testing.T, db interface {
	EnqueueJob(context.Context, *queue.Job) error
}, kind string, n int) []*queue.Job {
	t.Helper()
	jobs := make([]*queue.Job, n)
	for i := range jobs {
		jobs[i] = &queue.Job{Kind: kind}
		require.NoError(t, db.EnqueueJob(context.Background(), jobs[i]))
	}
	return jobs
}

func TestWorker_Lanes(t *testing.T) {
	t.Parallel()
	t.Run("SlowLaneIsolated", func(t *testing.T) {
		// Deliveries to a receiver that does not answer fill the delivery
		// lane and its backlog; completions still run in the model lane.
		t.Parallel()
		db := mustNewDB(t)
		w := queue.NewWorker(db, fastOptions())
		deliveries, completions := newProbe(), newProbe()
		close(completions.release)
		w.HandleIn(queue.LaneDelivery, "delivery.slow", deliveries.handle)
		w.HandleIn(queue.LaneModel, "model.call", completions.handle)
		mustStart(t, w)

		blocked := mustEnqueueN(t, db, "delivery.slow", 2*queue.DefaultDeliveryConcurrency)
		w.Notify()
		require.Eventually(t, func() bool { return deliveries.active.Load() == queue.DefaultDeliveryConcurrency },
			waitFor, tick, "the delivery lane fills")
		for _, j := range mustEnqueueN(t, db, "model.call", 10) {
			w.Notify()
			mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
		}
		assert.Equal(t, int32(10), completions.finished.Load())
		assert.Zero(t, deliveries.finished.Load(), "every completion ran while the deliveries were blocked")
		assert.Equal(t, int32(queue.DefaultDeliveryConcurrency), deliveries.active.Load())
		status := map[string]int{}
		for _, j := range blocked {
			got, err := db.GetJob(context.Background(), j.ID)
			require.NoError(t, err)
			status[got.Status]++
		}
		assert.Equal(t, map[string]int{queue.StatusRunning: queue.DefaultDeliveryConcurrency,
			queue.StatusQueued: queue.DefaultDeliveryConcurrency}, status, "the delivery lane took no model slot")

		close(deliveries.release)
		for _, j := range blocked {
			mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
		}
		assert.Equal(t, int32(queue.DefaultDeliveryConcurrency), deliveries.peak.Load())
	})
	t.Run("ConcurrencyPerLane", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		opts := fastOptions()
		opts.Concurrency = 1
		opts.Lanes = map[string]queue.LaneOptions{queue.LaneModel: {Concurrency: 2},
			queue.LaneDelivery: {Concurrency: 3}, "reports": {Concurrency: 2}}
		w := queue.NewWorker(db, opts)
		lanes := []struct {
			name string
			n    int
		}{{queue.LaneDefault, 1}, {queue.LaneModel, 2}, {queue.LaneDelivery, 3},
			{queue.LaneMaintenance, queue.DefaultMaintenanceConcurrency}, {"reports", 2}}
		probes := map[string]*probe{}
		jobs := map[string][]*queue.Job{}
		for _, l := range lanes {
			probes[l.name] = newProbe()
			w.HandleIn(l.name, l.name+".job", probes[l.name].handle)
			jobs[l.name] = mustEnqueueN(t, db, l.name+".job", 2*l.n+1)
		}
		mustStart(t, w)
		// Let one job of a lane go at a time, each once the lane is as
		// full as it may be; the other lanes stay full meanwhile.
		for _, l := range lanes {
			p := probes[l.name]
			for remaining := len(jobs[l.name]); remaining > 0; remaining-- {
				require.Eventually(t, func() bool { return int(p.active.Load()) == min(l.n, remaining) },
					waitFor, tick, "lane %s with %d jobs left", l.name, remaining)
				p.gate <- struct{}{}
			}
			for _, j := range jobs[l.name] {
				mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
			}
		}
		for _, l := range lanes {
			assert.Equal(t, int32(l.n), probes[l.name].peak.Load(), "lane %s", l.name)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		opts := fastOptions()
		// A lease far longer than the test: only Cancel can stop a handler
		// before its first heartbeat.
		opts.Lease = 10 * time.Minute
		opts.ShutdownTimeout = time.Millisecond // the other handler blocks until stopped
		w := queue.NewWorker(db, opts)
		started, stopped := make(chan string, 3), make(chan string, 3)
		h := func(ctx context.Context, j *queue.Job) error {
			started <- j.Kind + " " + j.RefID
			<-ctx.Done()
			stopped <- j.Kind + " " + j.RefID
			return ctx.Err()
		}
		w.HandleIn(queue.LaneModel, "model.run", h)
		w.HandleIn(queue.LaneMaintenance, "maintenance.deadline", h)
		w.HandleIn(queue.LaneDelivery, "delivery.slow", h)
		mustStart(t, w)
		run := mustEnqueue(t, db, &queue.Job{Kind: "model.run", RefID: "run-1"})
		deadline := mustEnqueue(t, db, &queue.Job{Kind: "maintenance.deadline", RefID: "run-1"})
		other := mustEnqueue(t, db, &queue.Job{Kind: "delivery.slow", RefID: "delivery-1"})
		w.Notify()
		got := map[string]bool{<-started: true, <-started: true, <-started: true}
		require.Len(t, got, 3)

		n, err := db.CancelJobs(context.Background(), "run-1")
		require.NoError(t, err)
		require.Equal(t, 2, n)
		assert.Equal(t, 2, w.Cancel("run-1"), "the ref's jobs are cancelled in both lanes")
		assert.ElementsMatch(t, []string{"model.run run-1", "maintenance.deadline run-1"}, []string{<-stopped, <-stopped})
		for _, j := range []*queue.Job{run, deadline} {
			cancelled := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusCancelled))
			assert.Equal(t, 1, cancelled.Attempts, "a cancelled job is not retried")
		}
		j, err := db.GetJob(context.Background(), other.ID)
		require.NoError(t, err)
		assert.Equal(t, queue.StatusRunning, j.Status, "the other lane's job keeps running")
	})
	t.Run("Shutdown", func(t *testing.T) {
		// Run waits for the handlers of every lane that finish within
		// ShutdownTimeout, and releases the jobs of the others.
		t.Parallel()
		db := mustNewDB(t)
		opts := fastOptions()
		opts.ShutdownTimeout = time.Second
		w := queue.NewWorker(db, opts)
		short, long := newProbe(), newProbe()
		w.HandleIn(queue.LaneModel, "short.model", short.handle)
		w.HandleIn(queue.LaneMaintenance, "short.maintenance", short.handle)
		w.HandleIn(queue.LaneDelivery, "long.delivery", long.handle)
		w.Handle("long.default", long.handle)
		shortJobs := append(mustEnqueueN(t, db, "short.model", 1), mustEnqueueN(t, db, "short.maintenance", 1)...)
		longJobs := append(mustEnqueueN(t, db, "long.delivery", 1), mustEnqueueN(t, db, "long.default", 1)...)
		stop := mustStart(t, w)
		require.Eventually(t, func() bool { return short.active.Load() == 2 && long.active.Load() == 2 }, waitFor, tick)

		var stopped sync.WaitGroup
		stopped.Go(stop)
		close(short.release) // the short handlers finish while Run waits
		stopped.Wait()
		assert.Zero(t, long.active.Load(), "Run returned after every handler")
		assert.Zero(t, long.finished.Load(), "the long handlers were cancelled")

		for _, j := range shortJobs {
			got, err := db.GetJob(context.Background(), j.ID)
			require.NoError(t, err)
			assert.Equal(t, queue.StatusSucceeded, got.Status, j.Kind)
		}
		for _, j := range longJobs {
			got, err := db.GetJob(context.Background(), j.ID)
			require.NoError(t, err)
			assert.Equal(t, queue.StatusQueued, got.Status, "%s released", j.Kind)
			assert.Zero(t, got.Attempts, "a released claim is not an attempt")
		}
	})
}

func TestWorker_HandleIn(t *testing.T) {
	t.Parallel()
	nop := func(context.Context, *queue.Job) error { return nil }
	t.Run("OneLanePerKind", func(t *testing.T) {
		t.Parallel()
		w := queue.NewWorker(mustNewDB(t), fastOptions())
		w.HandleIn(queue.LaneModel, "model.call", nop)
		assert.Panics(t, func() { w.HandleIn(queue.LaneDelivery, "model.call", nop) })
		assert.Panics(t, func() { w.Handle("model.call", nop) })
		w.Handle("greet", nop)
		assert.Panics(t, func() { w.HandleIn(queue.LaneMaintenance, "greet", nop) })
	})
	t.Run("UnknownLane", func(t *testing.T) {
		t.Parallel()
		w := queue.NewWorker(mustNewDB(t), fastOptions())
		assert.Panics(t, func() { w.HandleIn("models", "model.call", nop) })
		assert.Panics(t, func() { w.HandleIn("", "model.call", nop) })
		w.HandleIn(queue.LaneModel, "model.call", nop) // the failed registrations left no trace
	})
	t.Run("DeclaredLane", func(t *testing.T) {
		t.Parallel()
		db := mustNewDB(t)
		opts := fastOptions()
		opts.Lanes = map[string]queue.LaneOptions{"reports": {}}
		w := queue.NewWorker(db, opts)
		w.HandleIn("reports", "report.build", nop)
		mustStart(t, w)
		j := mustEnqueue(t, db, &queue.Job{Kind: "report.build"})
		mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
	})
	t.Run("DefaultLaneInLanes", func(t *testing.T) {
		t.Parallel()
		opts := fastOptions()
		opts.Lanes = map[string]queue.LaneOptions{queue.LaneDefault: {Concurrency: 8}}
		assert.Panics(t, func() { queue.NewWorker(mustNewDB(t), opts) }, "Concurrency is the default lane's")
	})
}

// TestWorker_LaneLoad shows what a lane reports of itself: its kinds, its
// slots, the jobs it runs, and how long they held a slot.
func TestWorker_LaneLoad(t *testing.T) {
	t.Parallel()
	db := mustNewDB(t)
	opts := fastOptions()
	opts.Lanes = map[string]queue.LaneOptions{queue.LaneModel: {Concurrency: 3}}
	w := queue.NewWorker(db, opts)
	p := newProbe()
	w.HandleIn(queue.LaneModel, "model.call", p.handle)
	w.HandleIn(queue.LaneModel, "model.task", p.handle)
	assert.Equal(t, []string{"model.call", "model.task"}, w.LaneKinds(queue.LaneModel))
	assert.Empty(t, w.LaneKinds(queue.LaneDelivery))
	assert.Empty(t, w.LaneKinds("nowhere"))
	assert.Equal(t, queue.LaneLoad{Concurrency: 3}, w.LaneLoad(queue.LaneModel), "nothing ran yet")

	mustStart(t, w)
	jobs := mustEnqueueN(t, db, "model.call", 5)
	require.Eventually(t, func() bool { return w.LaneLoad(queue.LaneModel).Running == 3 },
		20*time.Second, 5*time.Millisecond, "every slot busy")
	load := w.LaneLoad(queue.LaneModel)
	assert.Zero(t, load.MeanRun, "no job ended yet")

	close(p.release)
	for _, j := range jobs {
		mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
	}
	require.Eventually(t, func() bool { return w.LaneLoad(queue.LaneModel).Running == 0 },
		20*time.Second, 5*time.Millisecond)
	load = w.LaneLoad(queue.LaneModel)
	assert.Positive(t, load.MeanRun, "the ended jobs' time in their slots")
}
