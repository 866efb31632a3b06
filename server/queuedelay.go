package server

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Push-back on model work (Limits.MaxQueueDelay). The question a request
// that adds model work asks is: if this work is queued now, how long will
// it wait before a worker takes it?
//
// With a reading of this process's model lane (ModelWork.ModelLoad, the
// engine's), the answer counts jobs: the model jobs due in the queue
// (ModelWork.DueModelWork, every replica's), plus the requests admitted and not
// yet answered, whose jobs are on their way in, plus this one, less the
// lane's free slots, is the number of jobs that must wait for a slot; a
// lane whose slots are all busy starts Concurrency jobs per MeanRun
// (Little's law), so the last of them starts after
// waiting × MeanRun ÷ Concurrency. MeanRun follows the lane's recent jobs,
// so the prediction follows the machine: when requests crowd the
// processors, jobs take longer and the server refuses sooner. Counting the
// work ahead matters above capacity: when requests come four times faster
// than the workers start them, an oldest job that waited 0.5 s already
// means 2 s of queued work. With several replicas the due jobs are all of
// theirs but the lane is one replica's, so the prediction is pessimistic
// by the number of replicas: each refuses as if the bound were that much
// lower.
//
// When the lane's free slots take every job, nothing waits. Otherwise,
// before the lane's first job ended (so MeanRun is unknown), or without a
// lane in this process (a reading of no slots), the answer is how long the
// oldest due model job has waited so far.
//
// Work is refused when the prediction exceeds the bound, or queueRounds
// times the lane's MeanRun when that is longer: a job may always wait for a
// few rounds of the lane's slots, so that slow models (seconds a call)
// queue a burst of a few times the lane's slots rather than refuse whatever
// finds every slot busy.

// DefaultMaxQueueDelay is the push-back bound of DefaultLimits: model work
// predicted to wait longer than this, or than queueRounds of the lane's
// recent jobs took, to start is refused. For fast jobs (the echo model) it
// keeps an asynchronous completion's notification well within a second of
// its request while the server runs at capacity (docs/benchmarks.md); for
// real models, whose calls take seconds, four of their times are the bound.
const DefaultMaxQueueDelay = 100 * time.Millisecond

// queueDelayTTL is how long one reading of the queue serves MaxQueueDelay's
// checks, so that the check costs one store read per interval, not one per
// request. The requests admitted meanwhile are counted as they come
// (queueDelay.queuing), so the reading's age does not let a burst through.
const queueDelayTTL = 50 * time.Millisecond

// queueRounds is how many rounds of the model lane's slots new work may
// wait for, however small MaxQueueDelay (see the top of this file).
const queueRounds = 4

// maxQueueRetryAfter bounds the Retry-After of a refusal for the queue's
// delay.
const maxQueueRetryAfter = 30 * time.Second

// queueDelay holds the last reading of the queue's model work and counts
// the model work being admitted.
type queueDelay struct {
	// queuing counts the admitted requests that add model work and have
	// not yet been answered: their jobs are on their way into the queue,
	// or just in it, and the reading may not count them yet. Under load a
	// request can wait longer for its write's commit than the readings'
	// interval, and without them the server would admit a second's worth
	// of requests on one reading.
	queuing atomic.Int64

	mu     sync.Mutex
	readAt time.Time // zero: no reading yet
	due    queue.Due // the due model jobs at readAt
}

// checkQueueDelay refuses new model work while work queued now is
// predicted to wait more than MaxQueueDelay (or queueRounds of the lane's
// job times) to start. A queue that does not report its due jobs is not
// checked.
func (s *Server) checkQueueDelay(ctx context.Context) error {
	l := s.limits.limits
	d := &s.limits.delay
	now := s.limits.now()
	due, ok, err := d.read(ctx, now, l.ModelWork)
	if err != nil || !ok {
		return err
	}
	predicted := time.Duration(0)
	if !due.Oldest.IsZero() {
		predicted = max(now.Sub(due.Oldest), 0)
	}
	load := l.ModelWork.ModelLoad()
	if p, ok := predictFromLane(load, due.Jobs, int(d.queuing.Load())+1); ok {
		predicted = p
	}
	bound := max(l.MaxQueueDelay, queueRounds*load.MeanRun)
	if s.metrics != nil {
		s.metrics.modelStart.Set(predicted.Seconds())
	}
	if predicted <= bound {
		return nil
	}
	// About when the queue ahead will have come within the bound.
	retry := min(max(predicted-bound, time.Second), maxQueueRetryAfter)
	return canvas.RateLimited(retry, "The server has more work waiting than it can start promptly; try again later.")
}

// predictFromLane predicts the start delay of the last of arriving jobs
// queued behind due ones, from the lane that runs them; ok is false when
// some must wait for a slot and the lane has no measure of its jobs yet.
func predictFromLane(load queue.LaneLoad, due, arriving int) (time.Duration, bool) {
	if load.Concurrency <= 0 {
		return 0, false
	}
	waiting := due + arriving - max(load.Concurrency-load.Running, 0)
	if waiting <= 0 {
		return 0, true
	}
	if load.MeanRun <= 0 {
		return 0, false
	}
	return time.Duration(math.Min(float64(waiting)*float64(load.MeanRun)/float64(load.Concurrency), math.MaxInt64/2)), true
}

// admitted counts one more request adding model work until the returned
// function is called, once.
func (d *queueDelay) admitted() (release func()) {
	d.queuing.Add(1)
	return func() { d.queuing.Add(-1) }
}

// read returns the due model jobs, reading them from w unless a reading
// younger than queueDelayTTL is at hand; ok is false when w does not
// report them. Concurrent callers wait for one reading.
func (d *queueDelay) read(ctx context.Context, now time.Time, w ModelWork) (due queue.Due, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.readAt.IsZero() && now.Sub(d.readAt) < queueDelayTTL && !now.Before(d.readAt) {
		return d.due, true, nil
	}
	due, ok, err = w.DueModelWork(ctx)
	if err != nil || !ok {
		return queue.Due{}, ok, err
	}
	d.readAt, d.due = now, due
	return due, true, nil
}
