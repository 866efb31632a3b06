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
// it wait before a worker takes it? Two predictions answer it.
//
// With a reading of this process's model lane (Limits.ModelLoad, the
// engine's), the answer counts jobs: the model jobs due in the queue
// (queue.StatsStore, every replica's), plus the requests admitted and not
// yet answered, whose jobs are on their way in, plus this one, less the
// lane's free slots, is the number of jobs ahead that must wait; a lane
// whose slots are all busy starts Concurrency jobs per MeanRun (Little's
// law), so they start after waiting × MeanRun ÷ Concurrency. MeanRun
// follows the lane's recent jobs, so the prediction follows the machine:
// when requests crowd the processors, jobs take longer and the server
// refuses sooner. With several replicas the due jobs are all of theirs but
// the lane is one replica's, so the prediction is pessimistic by the
// number of replicas: each refuses as if the bound were that much lower.
//
// Without a lane reading (a server without an Engine), or before the
// lane's first job ended, the answer comes from two readings of the queue's
// oldest due model job, taken about a second apart: wait is how long the
// oldest due job has waited now; the head's speed is how far its RunAt
// moved between the readings, per second of wall time (jobs are claimed in
// RunAt order, so a head at 1 s/s starts jobs as fast as they come, at 0.25
// s/s a quarter as fast, at 0 not at all). Work queued now starts when the
// head reaches now, after wait ÷ speed. Without an earlier reading, or when
// the queue was empty at it, the speed is taken as 1.
//
// Work is refused when the prediction exceeds the bound, or the lane's
// MeanRun when that is longer: a job may always wait about one job's time,
// so that slow models (seconds a call) queue up to a slot's worth of work
// rather than refuse whatever finds every slot busy.

// DefaultMaxQueueDelay is the push-back bound of DefaultLimits: model work
// predicted to wait longer than this, or than one of the lane's recent
// jobs took, to start is refused. For fast jobs (the echo model) it keeps
// an asynchronous completion's notification well within a second of its
// request while the server runs at capacity (docs/benchmarks.md); for real
// models, whose calls take seconds, the job's own time is the bound.
const DefaultMaxQueueDelay = 100 * time.Millisecond

// queueDelayTTL is how long one reading of the queue serves MaxQueueDelay's
// checks, so that the check costs one store read per interval, not one per
// request. Between readings the requests of the interval are admitted on
// the last prediction: the bound can be overshot by what arrives in one
// interval.
const queueDelayTTL = 50 * time.Millisecond

// speedWindow is how far apart the two readings behind the head's speed
// are at most; minSpeedSpan is how far apart they must be at least.
const (
	speedWindow  = time.Second
	minSpeedSpan = 200 * time.Millisecond
)

// queueReading is one reading of the queue: when it was taken (the
// server's clock), and the RunAt of the oldest due job of model work then
// (the store's clock; zero when none was due).
type queueReading struct {
	at, oldest time.Time
}

// queueDelay predicts the start delay of new model work from the readings
// of the last speedWindow.
type queueDelay struct {
	// queuing counts the admitted requests that add model work and have
	// not yet been answered: their jobs are on their way into the queue,
	// or just in it, and the reading may not count them yet. Under load a
	// request can wait longer for its write's commit than the readings'
	// interval, and without them the server would admit a second's worth
	// of requests on one prediction.
	queuing atomic.Int64

	mu       sync.Mutex
	readings []queueReading // oldest first; the last is the current one
	// predicted is the start delay predicted by the current reading
	// (math.MaxInt64 when the head stood still), due the due jobs it
	// counted.
	predicted time.Duration
	due       int
}

// checkQueueDelay refuses new model work while work queued now is
// predicted to wait more than MaxQueueDelay (or one job's time) to start. A
// store that does not report its queue is not checked.
func (s *Server) checkQueueDelay(ctx context.Context) error {
	stats, ok := s.store.(queue.StatsStore)
	if !ok {
		return nil
	}
	l := s.limits.limits
	d := &s.limits.delay
	predicted, due, err := d.predict(ctx, s.limits.now(), stats, l.ModelKinds)
	if err != nil {
		return err
	}
	bound := l.MaxQueueDelay
	if l.ModelLoad != nil {
		load := l.ModelLoad()
		if p, ok := predictFromLane(load, due, int(d.queuing.Load())+1); ok {
			predicted = p
		}
		bound = max(bound, load.MeanRun)
	}
	if predicted <= bound {
		return nil
	}
	retry := backlogRetryAfter
	if predicted != math.MaxInt64 {
		// About when the queue ahead will have come within the bound.
		retry = min(max(predicted-bound, time.Second), maxQueueRetryAfter)
	}
	return canvas.RateLimited(retry, "The server has more work waiting than it can start promptly; try again later.")
}

// predictFromLane predicts the start delay of the last of arriving jobs
// queued behind due ones, from the lane that runs them; ok is false when
// the lane has no measure of its jobs yet.
func predictFromLane(load queue.LaneLoad, due, arriving int) (time.Duration, bool) {
	if load.MeanRun <= 0 || load.Concurrency <= 0 {
		return 0, false
	}
	waiting := due + arriving - max(load.Concurrency-load.Running, 0)
	if waiting <= 0 {
		return 0, true
	}
	return time.Duration(math.Min(float64(waiting)*float64(load.MeanRun)/float64(load.Concurrency), math.MaxInt64/2)), true
}

// maxQueueRetryAfter bounds the Retry-After of a refusal for the queue's
// delay.
const maxQueueRetryAfter = 30 * time.Second

// admitted counts one more request adding model work until the returned
// function is called.
func (d *queueDelay) admitted() (release func()) {
	d.queuing.Add(1)
	var once sync.Once
	return func() { once.Do(func() { d.queuing.Add(-1) }) }
}

// predict returns the predicted start delay of model work (of kinds)
// queued at now, math.MaxInt64 when the queue's head stood still, and the
// number of due jobs of kinds, reading stats unless a reading younger than
// queueDelayTTL is at hand. Concurrent callers wait for one reading.
func (d *queueDelay) predict(ctx context.Context, now time.Time, stats queue.StatsStore, kinds []string) (time.Duration, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.readings); n > 0 {
		last := d.readings[n-1].at
		if now.Sub(last) < queueDelayTTL && !now.Before(last) {
			return d.predicted, d.due, nil
		}
	}
	all, err := stats.QueueStats(ctx)
	if err != nil {
		return 0, 0, err
	}
	cur, due := queueReading{at: now}, 0
	for _, k := range all {
		if k.Due == 0 || !slices.Contains(kinds, k.Kind) {
			continue
		}
		due += k.Due
		if cur.oldest.IsZero() || k.OldestDue.Before(cur.oldest) {
			cur.oldest = k.OldestDue
		}
	}
	// Keep the readings of the window, the new one last; a clock that went
	// back drops them all.
	keep := slices.IndexFunc(d.readings, func(r queueReading) bool {
		return !r.at.Before(now.Add(-speedWindow)) && !r.at.After(now)
	})
	if keep < 0 {
		keep = len(d.readings)
	}
	d.readings = append(d.readings[keep:], cur)
	d.predicted, d.due = predictDelay(d.readings[0], cur), due
	return d.predicted, d.due, nil
}

// predictDelay returns the start delay of work queued at cur.at, from the
// reading cur and an earlier reading prev: the oldest due job's wait
// divided by the head's speed between the two (see the top of this file);
// math.MaxInt64 when the head did not move while jobs were due.
func predictDelay(prev, cur queueReading) time.Duration {
	if cur.oldest.IsZero() {
		return 0
	}
	wait := max(cur.at.Sub(cur.oldest), 0)
	span := cur.at.Sub(prev.at)
	if prev.oldest.IsZero() || span < minSpeedSpan {
		return wait
	}
	moved := cur.oldest.Sub(prev.oldest)
	if moved <= 0 {
		return math.MaxInt64
	}
	speed := float64(moved) / float64(span)
	return time.Duration(math.Min(float64(wait)/speed, math.MaxInt64/2))
}
