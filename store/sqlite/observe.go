package sqlite

import (
	"context"
	"time"
)

// Observer watches the store's write transactions, for metrics and traces.
// Set DB.Observer before the DB is used. Its methods are called on the
// write path: they must be safe for concurrent use and return quickly.
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

// Commit commits the transaction and reports a write transaction to the
// DB's Observer.
func (tx *Tx) Commit() error {
	err := tx.Tx.Commit()
	if o := tx.db.Observer; o != nil && tx.writes != nil {
		o.Committed(Commit{Name: tx.name, Writes: tx.writes, Start: tx.begun, Duration: time.Since(tx.begun), Err: err})
	}
	return err
}

// jobTrace returns the trace context to record with a job enqueued under
// ctx.
func (db *DB) jobTrace(ctx context.Context, own string) string {
	if own != "" || db.Observer == nil {
		return own
	}
	return db.Observer.JobTrace(ctx)
}

// writeContext is the context a write of a group commit runs under: the
// values of its caller's context (so that what the write records can
// name the caller's trace), the deadline and cancellation of the batch.
type writeContext struct {
	context.Context                 // the batch's
	values          context.Context // the caller's
}

func (c writeContext) Value(key any) any { return c.values.Value(key) }
