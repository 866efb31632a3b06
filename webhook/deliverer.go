package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

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
}

// NewHandler returns the queue handler that delivers jobs of kind JobKind
// through sender, retrying on RetrySchedule(). Register it with the queue
// worker under JobKind.
func NewHandler(sender *Sender) queue.Handler {
	return (&Deliverer{Sender: sender}).Handle
}

// Handle makes one attempt at the job's Delivery. It returns nil when the
// receiver answered 2xx; queue.Permanent when retrying cannot help (410, an
// unusable URL or payload, an address the network guard refuses); and
// otherwise queue.RetryAfter with the receiver's Retry-After (on 429 and
// 503) or the schedule's delay for this attempt. The error's text, which
// the queue keeps as the job's last error, names the attempt and the
// reason.
func (d *Deliverer) Handle(ctx context.Context, j *queue.Job) error {
	var del Delivery
	if err := json.Unmarshal(j.Payload, &del); err != nil {
		return queue.Permanent(fmt.Errorf("webhook: attempt %d: payload is not a delivery: %w", j.Attempts, err))
	}
	a := d.Sender.Send(ctx, &del)
	if a.OK() {
		return nil
	}
	if ctx.Err() != nil {
		// The worker stops or lost the lease: not the receiver's failure.
		return ctx.Err()
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
