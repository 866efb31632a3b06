package store

import (
	"context"
	"time"
)

// Observer watches a store's write transactions, for metrics and traces.
// store/sqlite and store/postgres each take one (their DB.Observer), set
// before the DB is used. Its methods are called on the write path: they
// must be safe for concurrent use and return quickly.
type Observer interface {
	// Committed reports a write transaction once its commit returned.
	Committed(c Commit)
	// JobTrace returns the trace context (a W3C traceparent) to record
	// with a job enqueued under ctx, or "" for none. A job that already
	// carries one keeps it.
	JobTrace(ctx context.Context) string
}

// Commit describes one write transaction.
type Commit struct {
	// System names the database ("sqlite", "postgresql").
	System string
	// Name is the group committer's name ("publish", "runs", "jobs",
	// "workflows") for a shared commit, "write" for a transaction of one
	// write.
	Name string
	// Writes are the contexts of the callers whose writes the transaction
	// held (one for a transaction of its own), for linking traces.
	Writes []context.Context
	// Start is when the transaction began; Duration runs to the end of the
	// commit.
	Start    time.Time
	Duration time.Duration
	// Err is the commit's error.
	Err error
}

// Observable is a store that reports its write transactions to an
// Observer; store/sqlite and store/postgres are.
type Observable interface {
	// SetObserver makes o the store's Observer when it has none (an
	// Observer its opener set stays). It is called before the store is
	// used.
	SetObserver(o Observer)
}
