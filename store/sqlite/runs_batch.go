package sqlite

import (
	"context"

	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// Group commit of run records. Every sync or streamed completion records
// its run once answered, every async one its run and job when accepted,
// its start and its end, and with synchronous=FULL one commit per write
// would cap completions at the disk's commit rate. Concurrent CreateRun,
// StartRun and FinishRun calls therefore share commits through
// db.runCommits (see commit.go): each write runs under its own savepoint,
// and each caller returns only after the commit that holds its write.

// createRunGrouped writes r (a run without a job) in a shared commit and
// returns once that commit is durable. The record is encoded before it
// joins the batch, in the caller's goroutine: the leader runs the batch's
// inserts one after the other, and whatever it does per record bounds how
// many records a second the store takes.
func (db *DB) createRunGrouped(ctx context.Context, r *completion.Run) error {
	row, err := encodeRun(db, r)
	if err != nil {
		return err
	}
	// The leader runs the write with its own context: the reservation is
	// taken from the caller's here.
	rec := idempotency.FromContext(ctx)
	return db.groupCommit(ctx, &db.runCommits, func(ctx context.Context, tx *Tx) error {
		if err := row.insert(ctx, tx); err != nil {
			return err
		}
		return recordIdempotencyRef(ctx, tx, rec, r.ID)
	})
}
