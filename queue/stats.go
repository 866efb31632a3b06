package queue

import (
	"context"
	"slices"
	"time"
)

// KindStats counts the unfinished jobs of one kind.
type KindStats struct {
	Kind string
	// Due counts the queued jobs whose RunAt has come; OldestDue is the
	// RunAt of the oldest of them (zero when there is none).
	Due       int
	OldestDue time.Time
	// Scheduled counts the queued jobs not yet due, such as retries
	// waiting out their backoff.
	Scheduled int
	// Running counts the running jobs, leases expired or not.
	Running int
}

// StatsStore reports the queue's backlog, for metrics.
type StatsStore interface {
	// QueueStats returns, in kind order, one KindStats for each kind that
	// has queued or running jobs, as of the store's clock. Kinds with
	// none are left out.
	QueueStats(ctx context.Context) ([]KindStats, error)
}

// Due counts the due queued jobs of some kinds.
type Due struct {
	// Jobs is how many are due; Oldest is the RunAt of the oldest of them
	// (zero when none is).
	Jobs   int
	Oldest time.Time
}

// DueOf sums the due jobs of stats whose kind is one of kinds.
func DueOf(stats []KindStats, kinds []string) Due {
	var d Due
	for _, k := range stats {
		if k.Due == 0 || !slices.Contains(kinds, k.Kind) {
			continue
		}
		d.Jobs += k.Due
		if d.Oldest.IsZero() || k.OldestDue.Before(d.Oldest) {
			d.Oldest = k.OldestDue
		}
	}
	return d
}
