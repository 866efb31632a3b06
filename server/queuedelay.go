package server

import (
	"context"
	"math"
	"slices"
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
// With a reading of this process's model lane (Limits.ModelLoad, the
// engine's), the answer counts jobs: the model jobs due in the queue
// (queue.StatsStore, every replica's), plus the requests admitted and not
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
// lane reading (a server given only a store), the answer is how long the
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
	oldest time.Time // RunAt of the oldest due model job; zero when none
	due    int       // due model jobs
}

// checkQueueDelay refuses new model work while work queued now is
// predicted to wait more than MaxQueueDelay (or queueRounds of the lane's
// job times) to start. A store that does not report its queue is not
// checked.
func (s *Server) checkQueueDelay(ctx context.Context) error {
	stats, ok := s.store.(queue.StatsStore)
	if !ok {
		return nil
	}
	l := s.limits.limits
	d := &s.limits.delay
	now := s.limits.now()
	oldest, due, err := d.read(ctx, now, stats, l.ModelKinds)
	if err != nil {
		return err
	}
	predicted := time.Duration(0)
	if !oldest.IsZero() {
		predicted = max(now.Sub(oldest), 0)
	}
	bound := l.MaxQueueDelay
	if l.ModelLoad != nil {
		load := l.ModelLoad()
		if p, ok := predictFromLane(load, due, int(d.queuing.Load())+1); ok {
			predicted = p
		}
		bound = max(bound, queueRounds*load.MeanRun)
	}
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

// read returns the RunAt of the oldest due model job (of kinds; zero when
// none is due) and the number of due model jobs, reading stats unless a
// reading younger than queueDelayTTL is at hand. Concurrent callers wait
// for one reading.
func (d *queueDelay) read(ctx context.Context, now time.Time, stats queue.StatsStore, kinds []string) (time.Time, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.readAt.IsZero() && now.Sub(d.readAt) < queueDelayTTL && !now.Before(d.readAt) {
		return d.oldest, d.due, nil
	}
	all, err := stats.QueueStats(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	var oldest time.Time
	due := 0
	for _, k := range all {
		if k.Due == 0 || !slices.Contains(kinds, k.Kind) {
			continue
		}
		due += k.Due
		if oldest.IsZero() || k.OldestDue.Before(oldest) {
			oldest = k.OldestDue
		}
	}
	d.readAt, d.oldest, d.due = now, oldest, due
	return oldest, due, nil
}
