package sqlite

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/store"
)

// Observer watches the store's write transactions, for metrics and traces
// (store.Observer). Set DB.Observer before the DB is used.
type Observer = store.Observer

// Commit describes one write transaction (store.Commit).
type Commit = store.Commit

// Commit commits the transaction and reports a write transaction to the
// DB's Observer.
func (tx *Tx) Commit() error {
	err := tx.Tx.Commit()
	if o := tx.db.Observer; o != nil && tx.writes != nil {
		o.Committed(Commit{System: "sqlite", Name: tx.name, Writes: tx.writes, Start: tx.begun, Duration: time.Since(tx.begun), Err: err})
	}
	return err
}

// writeContext is the context a write of a group commit runs under: the
// values of its caller's context (so that what the write records can
// name the caller's trace), the deadline and cancellation of the batch.
type writeContext struct {
	context.Context                 // the batch's
	values          context.Context // the caller's
}

func (c writeContext) Value(key any) any { return c.values.Value(key) }
