package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// JobKind is the kind of the purge job. It is also the RefID of every
// purge job, so that they are found, and cancelled, together.
const JobKind = "retention.purge"

// Defaults of Options.
const (
	// DefaultJobs is how long a finished job is kept: jobs are internal.
	DefaultJobs = 7 * 24 * time.Hour
	// DefaultDeliveries is how long a delivery log row and its attempts
	// are kept: operators read them.
	DefaultDeliveries = 30 * 24 * time.Hour
	// DefaultInterval is the time from the end of one purge to the next.
	DefaultInterval = time.Hour
	// DefaultBatchSize is how many records one write transaction deletes.
	DefaultBatchSize = 500
)

// Store is the persistence retention consumes. Each Purge method deletes,
// in one write transaction, at most limit ended records of its kind that
// ended before before, oldest first, and returns how many it deleted; a
// caller purges everything due by calling it until it returns less than
// limit.
type Store interface {
	// ScheduleJob enqueues j unless a queued or running job of j's Kind
	// serving j's RefID, other than the job except, exists; the check and
	// the insert are one transaction. It reports whether it enqueued j.
	ScheduleJob(ctx context.Context, j *queue.Job, except string) (bool, error)
	// PurgeJobs deletes succeeded, failed and cancelled jobs by their last
	// update.
	PurgeJobs(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeDeliveries deletes succeeded and failed delivery log rows by
	// their last update, with their attempts. A pending row stays.
	PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeRuns deletes completed and failed completion and task runs by
	// their completion.
	PurgeRuns(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeWorkflowRuns deletes workflow runs in a terminal status (see
	// workflow.Terminal) by their completion, with their steps.
	PurgeWorkflowRuns(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeAuditEvents deletes audit events by their time, from the head
	// of each workspace's chain only and never its last event, so that
	// what is kept is an unbroken tail that verifying starts from.
	PurgeAuditEvents(ctx context.Context, before time.Time, limit int) (int, error)
}

// Options configures a Purger. A zero retention keeps that kind of record
// forever; New fills the other zero fields with their defaults.
type Options struct {
	Store Store
	// Jobs, Deliveries, Runs and WorkflowRuns are the retentions of
	// finished jobs, delivery log rows, completion and task runs, and
	// workflow runs. Use DefaultJobs and DefaultDeliveries for the first
	// two; runs are read by id by their users, so nothing purges them
	// unless asked to.
	Jobs         time.Duration
	Deliveries   time.Duration
	Runs         time.Duration
	WorkflowRuns time.Duration
	// AuditEvents is the retention of audit events; zero keeps them
	// forever.
	AuditEvents time.Duration
	// Interval is the time from the end of one purge to the start of the
	// next; default DefaultInterval.
	Interval time.Duration
	// BatchSize bounds the records one write transaction deletes; default
	// DefaultBatchSize.
	BatchSize int
	// Now is the clock cut-offs and the next purge are computed from;
	// default time.Now.
	Now canvas.Clock
	// Logger receives what each purge deleted; default discards it.
	Logger *slog.Logger
}

// Counts are the records one purge deleted, by kind.
type Counts struct {
	Jobs, Deliveries, Runs, WorkflowRuns, AuditEvents int
}

// Purger purges ended records older than their retention.
type Purger struct {
	opts Options
}

// New returns a purger with opts, defaults filled in.
func New(opts Options) *Purger {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Purger{opts: opts}
}

// enabled reports whether any kind of record has a retention.
func (p *Purger) enabled() bool {
	o := p.opts
	return o.Jobs > 0 || o.Deliveries > 0 || o.Runs > 0 || o.WorkflowRuns > 0 || o.AuditEvents > 0
}

// Schedule queues a purge due now unless one is already queued or
// running, and reports whether it queued one. Call it at start-up, after
// registering Handle on the worker: it repairs a chain of purges that a
// job failed for good has broken. It queues nothing when every retention
// is zero.
func (p *Purger) Schedule(ctx context.Context) (bool, error) {
	if !p.enabled() {
		return false, nil
	}
	// A zero RunAt is the store's now.
	return p.opts.Store.ScheduleJob(ctx, &queue.Job{Kind: JobKind, RefID: JobKind}, "")
}

// Handle is the queue handler of JobKind: it purges, then queues the next
// purge an Interval from now unless another one is already queued (it
// runs at least once, like every handler). A failed purge is retried, so
// the chain goes on; once every retention is zero, the chain ends.
func (p *Purger) Handle(ctx context.Context, j *queue.Job) error {
	if !p.enabled() {
		return nil
	}
	n, err := p.Purge(ctx)
	if n != (Counts{}) {
		p.opts.Logger.Info("purged ended records", slog.Int("jobs", n.Jobs), slog.Int("deliveries", n.Deliveries),
			slog.Int("runs", n.Runs), slog.Int("workflowRuns", n.WorkflowRuns), slog.Int("auditEvents", n.AuditEvents))
	}
	if err != nil {
		return err
	}
	next := &queue.Job{Kind: JobKind, RefID: JobKind, RunAt: p.opts.Now().Add(p.opts.Interval)}
	_, err = p.opts.Store.ScheduleJob(ctx, next, j.ID)
	return err
}

// Purge deletes, batch by batch, every ended record older than its
// retention and returns how many of each kind it deleted, also when it
// stops early with ctx's error or a store error. The cut-offs are fixed
// at its start.
func (p *Purger) Purge(ctx context.Context) (Counts, error) {
	var n Counts
	now := p.opts.Now()
	kinds := []struct {
		retention time.Duration
		purge     func(context.Context, time.Time, int) (int, error)
		count     *int
	}{
		{p.opts.Jobs, p.opts.Store.PurgeJobs, &n.Jobs},
		{p.opts.Deliveries, p.opts.Store.PurgeDeliveries, &n.Deliveries},
		{p.opts.Runs, p.opts.Store.PurgeRuns, &n.Runs},
		{p.opts.WorkflowRuns, p.opts.Store.PurgeWorkflowRuns, &n.WorkflowRuns},
		{p.opts.AuditEvents, p.opts.Store.PurgeAuditEvents, &n.AuditEvents},
	}
	for _, k := range kinds {
		if k.retention <= 0 {
			continue
		}
		before := now.Add(-k.retention)
		for {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			deleted, err := k.purge(ctx, before, p.opts.BatchSize)
			*k.count += deleted
			if err != nil {
				return n, err
			}
			if deleted < p.opts.BatchSize {
				break
			}
		}
	}
	return n, nil
}
