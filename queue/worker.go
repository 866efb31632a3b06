package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// WorkerOptions configures a Worker; every zero field takes its default.
type WorkerOptions struct {
	// Owner identifies the worker's leases; default a random id. Two
	// running workers must not share one.
	Owner string
	// Concurrency bounds the jobs of LaneDefault run at once; default
	// DefaultConcurrency.
	Concurrency int
	// Lanes sets the concurrency of the system lanes (LaneModel,
	// LaneDelivery, LaneMaintenance) by name, and declares any other name as
	// a lane of its own; a zero field takes the lane's default. An entry for
	// LaneDefault panics in NewWorker: Concurrency is that lane's.
	Lanes map[string]LaneOptions
	// Lease is how long a claim holds a job without a heartbeat; default
	// 30s.
	Lease time.Duration
	// Heartbeat is how often a running job's lease is extended; default
	// Lease/3.
	Heartbeat time.Duration
	// PollInterval is how often the store is polled for due jobs when
	// nothing wakes the worker; default 500ms.
	PollInterval time.Duration
	// Backoff returns the delay before the next attempt of a job whose
	// attempt-th claim failed with a retryable error; default
	// DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// ShutdownTimeout is how long Run waits, once its context is done, for
	// running handlers to return before it cancels them and releases their
	// jobs; default 10s.
	ShutdownTimeout time.Duration
	// Logger receives the worker's errors; default discards them.
	Logger *slog.Logger
	// Now is the clock retries are scheduled from; default time.Now.
	Now canvas.Clock
}

// Worker claims due jobs from a Store and runs their handlers, each job in
// its own goroutine under a lease that a heartbeat extends. Its slots are
// split into lanes, each with its own concurrency and claim loop, so that a
// lane full of slow jobs never delays the jobs of another. Register
// handlers with Handle or HandleIn, then call Run.
type Worker struct {
	store    Store
	opts     WorkerOptions
	lanes    map[string]*lane
	handlers map[string]Handler

	mu      sync.Mutex
	started bool
	running map[string]runningJob // job id -> the running job
}

// runningJob is a job whose handler is running: the record it serves and
// the cancel of its context.
type runningJob struct {
	refID  string
	cancel context.CancelCauseFunc
}

// errLeaseLost and errShutdown are the causes with which a job's context is
// cancelled; errCancelled, Cancel's cause, is a lease lost on purpose.
var (
	errLeaseLost = errors.New("queue: lease lost")
	errShutdown  = errors.New("queue: worker shutting down")
	errCancelled = fmt.Errorf("queue: job cancelled: %w", errLeaseLost)
)

// DefaultBackoff is exponential backoff with full jitter: a random delay
// between 0 and 1s*2^(attempt-1), capped at 10 minutes.
func DefaultBackoff(attempt int) time.Duration {
	const base, ceiling = time.Second, 10 * time.Minute
	d := ceiling
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 10 {
		d = min(ceiling, base<<(attempt-1))
	}
	return mrand.N(d + 1)
}

// NewWorker returns a worker of store with opts, defaults filled in.
func NewWorker(store Store, opts WorkerOptions) *Worker {
	if opts.Owner == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		opts.Owner = "worker-" + hex.EncodeToString(b)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = opts.Lease / 3
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Worker{store: store, opts: opts, lanes: newLanes(opts), handlers: map[string]Handler{},
		running: map[string]runningJob{}}
}

// Owner returns the id the worker's leases are held under.
func (w *Worker) Owner() string { return w.opts.Owner }

// Handle registers h for the jobs of kind in LaneDefault. It must be
// called before Run; it panics afterwards or when kind already has a
// handler.
func (w *Worker) Handle(kind string, h Handler) { w.HandleIn(LaneDefault, kind, h) }

// HandleIn registers h for the jobs of kind in the lane named lane: they
// are claimed by that lane alone and run in its slots. A kind belongs to
// one lane. It must be called before Run; it panics afterwards, when the
// worker has no such lane, or when kind already has a handler in any lane.
func (w *Worker) HandleIn(lane, kind string, h Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		panic("queue: Handle called after Run")
	}
	l, ok := w.lanes[lane]
	if !ok {
		panic("queue: no lane named " + lane + " (declare it in WorkerOptions.Lanes)")
	}
	if _, dup := w.handlers[kind]; dup {
		panic("queue: a handler for " + kind + " is already registered")
	}
	w.handlers[kind] = h
	l.kinds = append(l.kinds, kind)
}

// LaneKinds returns the kinds registered in the lane named lane, in the
// order they were registered; none for a lane the worker does not have.
// Callers that act on a lane's work (a limit on queued model work, say)
// ask the worker, so that a kind added to the lane is never missed.
func (w *Worker) LaneKinds(lane string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l, ok := w.lanes[lane]; ok {
		return slices.Clone(l.kinds)
	}
	return nil
}

// LaneLoad returns a reading of the lane named lane; the zero LaneLoad for
// a lane the worker does not have.
func (w *Worker) LaneLoad(lane string) LaneLoad {
	if l, ok := w.lanes[lane]; ok {
		return l.load()
	}
	return LaneLoad{}
}

// Notify wakes every lane to claim at once instead of at its next poll; it
// never blocks. Call it after enqueueing a job in the same process.
func (w *Worker) Notify() {
	for _, l := range w.lanes {
		l.notify()
	}
}

// Cancel cancels at once the context of every handler of this worker
// running a job that serves refID, and reports how many it cancelled. It is
// the in-process fast path of a cancellation: call it after the store has
// cancelled the jobs (Store.CancelJobs), which other workers learn at their
// next heartbeat. The outcome of a cancelled handler is dropped, as when its
// lease is lost; an empty refID cancels nothing.
func (w *Worker) Cancel(refID string) int {
	if refID == "" {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, rj := range w.running {
		if rj.refID == refID {
			rj.cancel(errCancelled)
			n++
		}
	}
	return n
}

// Run claims and runs jobs in every lane that has a kind until ctx is done,
// then shuts down gracefully: every lane stops claiming, Run waits up to
// ShutdownTimeout for the running handlers of all lanes, then cancels the
// contexts of those still running and releases their jobs, which are due
// again at once without an attempt counted. It returns nil after a
// graceful shutdown, and an error when called twice.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("queue: Run called twice")
	}
	w.started = true
	w.mu.Unlock()

	// Store calls outlive ctx: a job finishing during shutdown still
	// records its outcome.
	storeCtx := context.WithoutCancel(ctx)
	// A store shared by several processes wakes the lanes when another
	// process enqueues (EnqueueWaker).
	if ew, ok := w.store.(EnqueueWaker); ok {
		stop := ew.WakeOnEnqueue(w.Notify)
		defer stop()
	}
	var jobs, loops sync.WaitGroup
	for _, l := range w.lanes {
		if len(l.kinds) > 0 {
			loops.Go(func() { w.runLane(ctx, storeCtx, l, &jobs) })
		}
	}
	<-ctx.Done()
	loops.Wait() // no lane starts a job any more
	w.shutdown(&jobs)
	return nil
}

// shutdown waits for the running jobs up to ShutdownTimeout, then cancels
// the rest (runJob releases them) and waits for them to return.
func (w *Worker) shutdown(wg *sync.WaitGroup) {
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	timer := time.NewTimer(w.opts.ShutdownTimeout)
	defer timer.Stop()
	select {
	case <-finished:
		return
	case <-timer.C:
	}
	w.mu.Lock()
	for _, rj := range w.running {
		rj.cancel(errShutdown)
	}
	w.mu.Unlock()
	<-finished
}

// runJob runs the handler of j under a heartbeat and records the outcome.
func (w *Worker) runJob(storeCtx, jobCtx context.Context, cancel context.CancelCauseFunc, j *Job) {
	defer func() {
		w.mu.Lock()
		delete(w.running, j.ID)
		w.mu.Unlock()
		cancel(nil)
	}()
	hbDone := make(chan struct{})
	hbStopped := make(chan struct{})
	go func() {
		defer close(hbStopped)
		w.heartbeat(storeCtx, j, cancel, hbDone)
	}()
	err := w.call(jobCtx, j)
	close(hbDone)
	<-hbStopped

	log := w.opts.Logger.With(slog.String("job", j.ID), slog.String("kind", j.Kind), slog.Int("attempt", j.Attempts))
	cause := context.Cause(jobCtx)
	var serr error
	switch {
	case errors.Is(cause, errLeaseLost):
		log.WarnContext(storeCtx, "queue: outcome dropped", slog.Any("cause", cause), slog.Any("error", err))
		return
	case err == nil:
		serr = w.store.CompleteJob(storeCtx, j.ID, w.opts.Owner)
	case errors.Is(cause, errShutdown):
		serr = w.store.ReleaseJob(storeCtx, j.ID, w.opts.Owner)
	case IsPermanent(err):
		serr = w.store.FailJob(storeCtx, FailJobParams{ID: j.ID, Owner: w.opts.Owner, LastError: err.Error()})
	case j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts:
		serr = w.store.FailJob(storeCtx, FailJobParams{ID: j.ID, Owner: w.opts.Owner,
			LastError: fmt.Sprintf("%s (gave up after %d attempts)", err.Error(), j.Attempts)})
	default:
		delay, ok := RetryDelay(err)
		if !ok {
			delay = w.opts.Backoff(j.Attempts)
		}
		serr = w.store.RetryJob(storeCtx, RetryJobParams{ID: j.ID, Owner: w.opts.Owner,
			RunAt: w.opts.Now().Add(delay), LastError: err.Error()})
	}
	if err != nil {
		log.InfoContext(storeCtx, "queue: job attempt failed", slog.Any("error", err))
	}
	if serr != nil {
		log.ErrorContext(storeCtx, "queue: record outcome", slog.Any("error", serr))
	}
}

// call runs the handler of j, turning a panic into a retryable error. The
// panic is logged at ERROR with the job, its kind and the stack of the
// panicking goroutine, which the error kept in Job.LastError lacks.
func (w *Worker) call(ctx context.Context, j *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("queue: handler panicked: %v", v)
			w.opts.Logger.ErrorContext(ctx, "queue: handler panicked", slog.String("job", j.ID),
				slog.String("kind", j.Kind), slog.Int("attempt", j.Attempts),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	return w.handlers[j.Kind](ctx, j)
}

// heartbeat extends j's lease every Heartbeat until stop is closed; when
// the store answers CONFLICT or NOT_FOUND (the job was cancelled or claimed
// by another worker) it cancels the job's context with errLeaseLost. Other
// errors are logged and the next beat tries again.
func (w *Worker) heartbeat(ctx context.Context, j *Job, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	ticker := time.NewTicker(w.opts.Heartbeat)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
		err := w.store.HeartbeatJob(ctx, j.ID, w.opts.Owner, w.opts.Lease)
		switch canvas.ErrorCode(err) {
		case "":
		case canvas.ECONFLICT, canvas.ENOTFOUND:
			cancel(errLeaseLost)
			return
		default:
			w.opts.Logger.ErrorContext(ctx, "queue: heartbeat", slog.String("job", j.ID), slog.Any("error", err))
		}
	}
}
