package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Deliverer is the queue handler of delivery jobs (kind JobKind): each
// claim of a job is one attempt at its Delivery.
type Deliverer struct {
	// Sender makes the attempts.
	Sender *Sender
	// Schedule is the delay before each retry; nil means RetrySchedule().
	// Retry n (after attempt n fails) waits Schedule[n-1], or the last
	// entry once the schedule is exhausted, with Jitter applied.
	Schedule []time.Duration
	// Jitter spreads a delay so that deliveries failed together are not
	// retried together; nil means a uniform ±10%.
	Jitter func(time.Duration) time.Duration
	// Logger receives one line per failed attempt; nil discards them.
	Logger *slog.Logger
	// Log records every attempt and the delivery's status in the delivery
	// log; nil keeps no log.
	Log LogStore
	// Subscriptions is asked, before each attempt at a delivery with an
	// ApplicationID, whether the subscription is still enabled and which
	// secrets sign; it records the outcome of deliveries that end. Nil
	// sends such deliveries as they are, signed with Delivery.Secret.
	Subscriptions SubscriptionStore
	// MaxConsecutiveFailures is how many deliveries of a subscription may
	// fail for good in a row before it is disabled; zero means
	// DefaultMaxConsecutiveFailures.
	MaxConsecutiveFailures int

	// logMu guards the group commit of the log (see record).
	logMu    sync.Mutex
	pending  []*pendingOutcome
	flushing bool
}

// pendingOutcome is an outcome waiting for the log's next commit.
type pendingOutcome struct {
	o    AttemptOutcome
	done chan error
}

// NewHandler returns the queue handler that delivers jobs of kind JobKind
// through sender, retrying on RetrySchedule(). Register it with the queue
// worker under JobKind.
func NewHandler(sender *Sender) queue.Handler {
	return (&Deliverer{Sender: sender}).Handle
}

// Handle makes one attempt at the job's Delivery. It returns nil when the
// receiver answered 2xx; queue.Permanent when retrying cannot help (410, an
// unusable URL or payload, an address the network guard refuses, a
// subscription that is disabled or gone); and otherwise queue.RetryAfter
// with the receiver's Retry-After (on 429 and 503) or the schedule's delay
// for this attempt. The error's text, which the queue keeps as the job's
// last error, names the attempt and the reason.
//
// With a Log, each attempt is appended to the delivery log with the
// delivery's new status: succeeded, failed when this attempt was its last
// (permanent, or the job's last allowed attempt), pending otherwise. A
// delivery of a disabled subscription is not sent: it ends failed with
// ReasonSubscriptionDisabled. When a subscription's delivery ends, its
// outcome is recorded: a success resets the failure count; a final failure
// counts one, and disables the subscription on a 410 or when the count
// reaches MaxConsecutiveFailures.
func (d *Deliverer) Handle(ctx context.Context, j *queue.Job) error {
	var del Delivery
	if err := json.Unmarshal(j.Payload, &del); err != nil {
		return queue.Permanent(fmt.Errorf("webhook: attempt %d: payload is not a delivery: %w", j.Attempts, err))
	}
	var secrets []string
	if del.Secret != "" {
		secrets = []string{del.Secret}
	}
	var target *SubscriptionTarget
	if del.ApplicationID != "" && d.Subscriptions != nil {
		t, err := d.Subscriptions.SubscriptionTarget(ctx, del.ApplicationID)
		switch {
		case canvas.ErrorCode(err) == canvas.ENOTFOUND:
			t = &SubscriptionTarget{ApplicationID: del.ApplicationID}
		case err != nil:
			return fmt.Errorf("webhook: attempt %d: read the subscription: %w", j.Attempts, err)
		}
		if !t.Enabled {
			d.record(ctx, j, &del, nil, StatusFailed, ReasonSubscriptionDisabled)
			return queue.Permanent(fmt.Errorf("webhook: attempt %d: %s", j.Attempts, ReasonSubscriptionDisabled))
		}
		target, secrets = t, nil
		for _, s := range t.Secrets {
			secrets = append(secrets, s.Value)
		}
	}
	a := d.Sender.SendSigned(ctx, &del, secrets)
	if !a.OK() && ctx.Err() != nil {
		// The worker stops or lost the lease: not the receiver's failure.
		return ctx.Err()
	}
	logged := NewLoggedAttempt(a)
	if a.OK() {
		d.record(ctx, j, &del, &logged, StatusSucceeded, "")
		if target != nil && target.ConsecutiveFailures > 0 {
			d.outcome(ctx, del.ApplicationID, true, false, "")
		}
		return nil
	}
	final := a.Permanent || (j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts)
	status := StatusPending
	if final {
		status = StatusFailed
	}
	d.record(ctx, j, &del, &logged, status, a.Err.Error())
	if final && target != nil {
		limit := d.MaxConsecutiveFailures
		if limit <= 0 {
			limit = DefaultMaxConsecutiveFailures
		}
		switch {
		case a.Status == http.StatusGone:
			d.outcome(ctx, del.ApplicationID, false, true, "receiver answered 410 Gone")
		case target.ConsecutiveFailures+1 >= limit:
			d.outcome(ctx, del.ApplicationID, false, true,
				fmt.Sprintf("%d deliveries in a row failed; the last: %v", target.ConsecutiveFailures+1, a.Err))
		default:
			d.outcome(ctx, del.ApplicationID, false, false, "")
		}
	}
	err := fmt.Errorf("attempt %d: %w", j.Attempts, a.Err)
	if d.Logger != nil {
		d.Logger.WarnContext(ctx, "webhook delivery failed", slog.String("jobId", j.ID),
			slog.String("deliveryId", del.ID), slog.Int("attempt", j.Attempts),
			slog.Int("status", a.Status), slog.Any("error", a.Err))
	}
	if a.Permanent {
		return queue.Permanent(err)
	}
	if a.RetryAfter > 0 {
		return queue.RetryAfter(err, a.RetryAfter)
	}
	return queue.RetryAfter(err, d.delay(j.Attempts))
}

// record writes an attempt's outcome to the log, when there is one, and
// returns once it is committed. Concurrent deliveries share commits: the
// first to arrive writes, in one RecordAttempts transaction, every outcome
// queued until then, and goes on until none is left; the others wait for
// the commit that holds theirs. A log that cannot be written does not fail
// the delivery: the notification matters more than its record, and the
// failure is logged.
func (d *Deliverer) record(ctx context.Context, j *queue.Job, del *Delivery, a *LoggedAttempt, status, lastError string) {
	if d.Log == nil {
		return
	}
	p := &pendingOutcome{o: AttemptOutcome{WorkspaceID: j.WorkspaceID, DeliveryID: del.ID, Attempt: a,
		Status: status, LastError: lastError}, done: make(chan error, 1)}
	d.logMu.Lock()
	d.pending = append(d.pending, p)
	if !d.flushing {
		d.flushing = true
		for len(d.pending) > 0 {
			batch := d.pending
			d.pending = nil
			d.logMu.Unlock()
			outcomes := make([]AttemptOutcome, len(batch))
			for i, b := range batch {
				outcomes[i] = b.o
			}
			// The batch holds other deliveries' outcomes: this one's
			// cancellation must not drop them.
			err := d.Log.RecordAttempts(context.WithoutCancel(ctx), outcomes)
			for _, b := range batch {
				b.done <- err
			}
			d.logMu.Lock()
		}
		d.flushing = false
	}
	d.logMu.Unlock()
	if err := <-p.done; err != nil && d.Logger != nil {
		d.Logger.ErrorContext(ctx, "webhook delivery log not written", slog.String("deliveryId", del.ID), slog.Any("error", err))
	}
}

// outcome records the end of a subscription's delivery, logging a failure
// to do so.
func (d *Deliverer) outcome(ctx context.Context, applicationID string, succeeded, disable bool, reason string) {
	err := d.Subscriptions.RecordSubscriptionOutcome(ctx, applicationID, succeeded, disable, reason)
	if err != nil && d.Logger != nil {
		d.Logger.ErrorContext(ctx, "webhook subscription outcome not recorded", slog.String("applicationId", applicationID), slog.Any("error", err))
	}
}

// delay returns the wait before the retry that follows attempt n (n >= 1).
func (d *Deliverer) delay(n int) time.Duration {
	schedule := d.Schedule
	if schedule == nil {
		schedule = RetrySchedule()
	}
	if len(schedule) == 0 {
		return 0
	}
	base := schedule[min(max(n, 1), len(schedule))-1]
	if d.Jitter != nil {
		return d.Jitter(base)
	}
	return Jitter(base)
}

// Jitter returns base spread uniformly over ±10%.
func Jitter(base time.Duration) time.Duration {
	spread := int64(base) / 10
	if spread <= 0 {
		return base
	}
	return base - time.Duration(spread) + time.Duration(rand.Int64N(2*spread+1))
}
