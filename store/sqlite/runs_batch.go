package sqlite

import (
	"context"
	"errors"
	"sync"

	"github.com/promptcanvas/promptcanvas/completion"
)

// Group commit of run records. Every sync or streamed completion records
// its run once answered, and with synchronous=FULL one commit per request
// would cap completions at the disk's commit rate. Concurrent CreateRun
// calls without a job therefore share commits: the first caller to find no
// commit under way becomes the leader and writes every waiting record in
// one transaction, each under its own savepoint so that a failing insert
// fails alone, commits once, and answers each caller. Records that arrived
// meanwhile are written by a new leader goroutine, so that no caller waits
// for more than the commit after its own arrival. A caller is answered only
// after the commit that holds its record, so durability is that of one
// transaction per record. There is no background goroutine to stop: a
// leader exists only while records wait.

// maxRunBatch bounds how many records share one commit.
const maxRunBatch = 64

// runCommitter holds the records waiting for a commit.
type runCommitter struct {
	mu      sync.Mutex
	pending []*runRequest
	leading bool
}

// runRequest is one CreateRun waiting for its commit.
type runRequest struct {
	ctx  context.Context
	run  *completion.Run
	done chan error // buffered: the leader never blocks on it
}

// createRunGrouped writes r (a run without a job) in a shared commit and
// returns once that commit is durable.
func (db *DB) createRunGrouped(ctx context.Context, r *completion.Run) error {
	req := &runRequest{ctx: ctx, run: r, done: make(chan error, 1)}
	c := &db.runCommits
	c.mu.Lock()
	c.pending = append(c.pending, req)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if lead {
		db.commitRuns()
	}
	return <-req.done
}

// commitRuns writes one batch of waiting records and, when more are
// waiting afterwards, hands the lead to a new goroutine.
func (db *DB) commitRuns() {
	c := &db.runCommits
	c.mu.Lock()
	n := min(len(c.pending), maxRunBatch)
	batch := append([]*runRequest(nil), c.pending[:n]...)
	c.pending = append(c.pending[:0], c.pending[n:]...)
	c.mu.Unlock()

	db.runBatch(batch)

	c.mu.Lock()
	more := len(c.pending) > 0
	c.leading = more
	c.mu.Unlock()
	if more {
		go db.commitRuns()
	}
}

// runBatch writes a batch in one write transaction and answers each
// request. A request whose context ended before its turn is answered with
// the context's error and writes nothing; when the commit fails, every
// record of the batch fails with it.
func (db *DB) runBatch(batch []*runRequest) {
	errs := make([]error, len(batch))
	defer func() {
		for i, req := range batch {
			req.done <- errs[i]
		}
	}()
	// The batch serves several callers, so no one caller's context may
	// cancel it; each caller's context is checked before its turn.
	ctx := context.Background()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	defer tx.Rollback()
	for i, req := range batch {
		if err := req.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = runSavepoint(ctx, tx, req.run)
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
}

// runSavepoint inserts one record of a batch under a savepoint, and rolls
// back to it when the insert fails, so the batch's other records stand.
func runSavepoint(ctx context.Context, tx *Tx, r *completion.Run) error {
	if _, err := tx.exec(ctx, `SAVEPOINT run`); err != nil {
		return err
	}
	err := insertRun(ctx, tx, r)
	if err != nil {
		if _, rerr := tx.exec(ctx, `ROLLBACK TO run`); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.exec(ctx, `RELEASE run`); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
