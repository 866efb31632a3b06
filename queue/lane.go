package queue

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Lane names. Every worker has these lanes; WorkerOptions.Lanes may set
// their concurrency and declare more. A lane with no kind registered runs
// no claim loop.
const (
	// LaneDefault holds the kinds registered with Handle; its concurrency is
	// WorkerOptions.Concurrency.
	LaneDefault = "default"
	// LaneModel holds the jobs that wait on a model: async completions and
	// tasks, test-case generations, workflow runs.
	LaneModel = "model"
	// LaneDelivery holds the jobs that wait on a webhook receiver:
	// deliveries and their fan-outs.
	LaneDelivery = "delivery"
	// LaneMaintenance holds short housekeeping jobs: the retention purge,
	// file expiry, workflow run deadlines.
	LaneMaintenance = "maintenance"
)

// Default concurrency of each lane: how many of its jobs run at once unless
// WorkerOptions says otherwise.
const (
	// DefaultConcurrency is LaneDefault's, and that of a lane declared in
	// WorkerOptions.Lanes without a concurrency.
	DefaultConcurrency = 4
	// DefaultModelConcurrency is LaneModel's: its jobs mostly wait on a
	// model, and a workflow run holds its slot while it runs.
	DefaultModelConcurrency = 16
	// DefaultDeliveryConcurrency is LaneDelivery's: a delivery may wait up
	// to its timeout on a slow receiver.
	DefaultDeliveryConcurrency = 16
	// DefaultMaintenanceConcurrency is LaneMaintenance's: its jobs are short
	// and none is urgent.
	DefaultMaintenanceConcurrency = 2
)

// LaneOptions configures one lane; every zero field takes its default.
type LaneOptions struct {
	// Concurrency bounds the lane's jobs run at once.
	Concurrency int
}

// lane is a share of the worker's slots with its own kinds and its own
// claim loop, so that the jobs of one lane never wait for another's.
type lane struct {
	name        string
	concurrency int
	kinds       []string
	wake        chan struct{}

	// running counts the lane's jobs running now; meanRun is the moving
	// average, in nanoseconds, of how long a job held its slot (0: none
	// ended yet).
	running atomic.Int64
	meanRun atomic.Int64
}

// LaneLoad is a reading of one lane of a worker, for limits that predict
// how soon the lane will start new work.
type LaneLoad struct {
	// Concurrency is how many of the lane's jobs the worker runs at once;
	// Running how many it runs now.
	Concurrency, Running int
	// MeanRun is the moving average of how long the lane's recent jobs
	// held their slot, outcome written (zero before the first ends). A
	// lane whose slots are all busy starts Concurrency jobs per MeanRun.
	MeanRun time.Duration
}

// meanRunWeight is the weight of the newest job in meanRun: the average
// follows the last dozen or so jobs.
const meanRunWeight = 8

// ran records that one of the lane's jobs held its slot for d.
func (l *lane) ran(d time.Duration) {
	for {
		old := l.meanRun.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/meanRunWeight
		}
		if l.meanRun.CompareAndSwap(old, next) {
			return
		}
	}
}

// load returns the lane's reading.
func (l *lane) load() LaneLoad {
	return LaneLoad{Concurrency: l.concurrency, Running: int(l.running.Load()),
		MeanRun: time.Duration(l.meanRun.Load())}
}

// newLanes returns the worker's lanes: the default and system lanes with
// their default concurrency, then opts.Lanes applied. It panics when
// opts.Lanes names LaneDefault, whose concurrency is opts.Concurrency.
func newLanes(opts WorkerOptions) map[string]*lane {
	lanes := map[string]*lane{}
	for name, n := range map[string]int{LaneDefault: opts.Concurrency, LaneModel: DefaultModelConcurrency,
		LaneDelivery: DefaultDeliveryConcurrency, LaneMaintenance: DefaultMaintenanceConcurrency} {
		lanes[name] = &lane{name: name, concurrency: n, wake: make(chan struct{}, 1)}
	}
	for name, lo := range opts.Lanes {
		if name == LaneDefault {
			panic("queue: the default lane's concurrency is WorkerOptions.Concurrency, not a Lanes entry")
		}
		l, ok := lanes[name]
		if !ok {
			l = &lane{name: name, concurrency: DefaultConcurrency, wake: make(chan struct{}, 1)}
			lanes[name] = l
		}
		if lo.Concurrency > 0 {
			l.concurrency = lo.Concurrency
		}
	}
	return lanes
}

// notify wakes the lane's claim loop; it never blocks.
func (l *lane) notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// runLane claims and starts the jobs of l until ctx is done, each job in a
// goroutine of wg. It returns without waiting for them.
func (w *Worker) runLane(ctx, storeCtx context.Context, l *lane, wg *sync.WaitGroup) {
	done := make(chan struct{}, l.concurrency)
	inflight := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			inflight--
			if !l.refill(ctx, done, &inflight) {
				return
			}
		case <-l.wake:
		case <-timer.C:
		}
		for len(done) > 0 { // count every finished job before claiming
			<-done
			inflight--
		}
		free := l.concurrency - inflight
		if free <= 0 {
			resetTimer(timer, w.opts.PollInterval)
			continue
		}
		jobs, err := w.store.ClaimJobs(storeCtx, w.opts.Owner, l.kinds, free, w.opts.Lease)
		if err != nil {
			w.opts.Logger.ErrorContext(ctx, "queue: claim", slog.String("owner", w.opts.Owner),
				slog.String("lane", l.name), slog.Any("error", err))
		}
		for _, j := range jobs {
			inflight++
			jobCtx, cancel := context.WithCancelCause(storeCtx)
			w.mu.Lock()
			w.running[j.ID] = runningJob{refID: j.RefID, cancel: cancel}
			w.mu.Unlock()
			l.running.Add(1)
			wg.Go(func() {
				start := time.Now()
				defer func() {
					l.ran(time.Since(start))
					l.running.Add(-1)
					done <- struct{}{}
				}()
				w.runJob(storeCtx, jobCtx, cancel, j)
			})
		}
		if len(jobs) == free && err == nil {
			l.notify() // a full batch: more may be due
		}
		resetTimer(timer, w.opts.PollInterval)
	}
}

// refillWindow is how long a lane whose slot freed while others still run
// waits for more slots to free before it claims. Each claim is a commit, so
// refilling the slots one claim per freed slot would cost a disk flush per
// job; jobs tend to finish together (their outcomes share commits), and the
// window lets their slots refill in one claim.
const refillWindow = 2 * time.Millisecond

// refill waits, after a slot of l freed while other jobs still run, until
// half its slots are free, refillWindow has passed, or a Notify (a job was
// just enqueued) arrives, whichever comes first, counting the jobs that
// finish meanwhile. An idle lane never waits: the poll and Notify claim at
// once. It returns false when ctx is done.
func (l *lane) refill(ctx context.Context, done <-chan struct{}, inflight *int) bool {
	half := (l.concurrency + 1) / 2
	if l.concurrency-*inflight >= half {
		return true
	}
	t := time.NewTimer(refillWindow)
	defer t.Stop()
	for l.concurrency-*inflight < half {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			(*inflight)--
		case <-l.wake:
			return true
		case <-t.C:
			return true
		}
	}
	return true
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}
