package sqlite

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Group commit. With synchronous=FULL every commit waits for the disk, and
// one commit per write caps a kind of write at the disk's commit rate. A
// committer therefore shares commits between concurrent calls: the first
// caller to find no commit under way becomes the leader and runs every
// waiting write in one transaction, each under its own savepoint so that a
// failing write fails alone, commits once, and answers each caller. Writes
// that arrived meanwhile are run by a new leader goroutine, so that no
// caller waits for more than the commit after its own arrival. A caller is
// answered only after the commit that holds its write, so durability is
// that of one transaction per write. There is no background goroutine to
// stop: a leader exists only while writes wait.
//
// Publishes, run records, the claims and outcomes of queue jobs and the step states of
// workflow runs (the sqlstore.Group of each write) each have their own
// committer, so that one kind of write never waits behind a long batch of
// another's.

// errClosed answers a grouped write made after Close.
var errClosed = errors.New("sqlite: database is closed")

// maxCommitBatch bounds how many writes share one commit.
const maxCommitBatch = 64

// collectYields is how many times a leader yields the processor before it
// takes its batch. Callers answered by the previous commit are usually about
// to write again; without the yields, batches alternate between the few
// callers that were not in the last one and the rest. A yield costs
// microseconds; a commit costs a disk flush.
const collectYields = 3

// committer holds the writes waiting for a commit.
type committer struct {
	name    string // for the Observer
	mu      sync.Mutex
	pending []*commitRequest
	leading bool
}

// commitRequest is one write waiting for its commit.
type commitRequest struct {
	ctx   context.Context
	write func(ctx context.Context, tx *Tx) error
	done  chan error // buffered: the leader never blocks on it
}

// groupCommit runs write in a transaction shared with the other writes
// waiting on c and returns its error, once that transaction's commit is
// durable. write must leave tx as it found it when it fails; the savepoint
// it runs under undoes its changes.
func (db *DB) groupCommit(ctx context.Context, c *committer, write func(ctx context.Context, tx *Tx) error) error {
	if db.closed.Load() {
		return errClosed
	}
	req := &commitRequest{ctx: ctx, write: write, done: make(chan error, 1)}
	c.mu.Lock()
	c.pending = append(c.pending, req)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if lead {
		db.commitBatches(c)
	}
	return <-req.done
}

// batchTimeout bounds one shared commit, beyond the busy timeout of the
// connection.
const batchTimeout = time.Minute

// commitBatches runs one batch of c's waiting writes and, when more are
// waiting afterwards, hands the lead to a new goroutine.
func (db *DB) commitBatches(c *committer) {
	for range collectYields {
		runtime.Gosched()
	}
	c.mu.Lock()
	n := min(len(c.pending), maxCommitBatch)
	batch := append([]*commitRequest(nil), c.pending[:n]...)
	c.pending = append(c.pending[:0], c.pending[n:]...)
	c.mu.Unlock()

	db.commitBatch(c, batch)

	c.mu.Lock()
	more := len(c.pending) > 0
	c.leading = more
	c.mu.Unlock()
	if more {
		go db.commitBatches(c)
	}
}

// commitBatch runs a batch in one write transaction and answers each
// request. A request whose context ended before its turn is answered with
// the context's error and writes nothing; when the commit fails, every
// write of the batch fails with it.
func (db *DB) commitBatch(c *committer, batch []*commitRequest) {
	errs := make([]error, len(batch))
	defer func() {
		for i, req := range batch {
			req.done <- errs[i]
		}
	}()
	// The batch serves several callers, so no one caller's context may
	// cancel it; each caller's context is checked before its turn, and the
	// batch has its own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	defer tx.Rollback()
	tx.name, tx.writes = c.name, make([]context.Context, len(batch))
	for i, req := range batch {
		tx.writes[i] = req.ctx
		if err := req.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = savepoint(writeContext{ctx, req.ctx}, tx, req.write)
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
}

// savepoint runs one write of a batch under a savepoint, and rolls back to
// it when the write fails, so the batch's other writes stand.
func savepoint(ctx context.Context, tx *Tx, write func(ctx context.Context, tx *Tx) error) error {
	if _, err := tx.exec(ctx, `SAVEPOINT write`); err != nil {
		return err
	}
	err := write(ctx, tx)
	if err != nil {
		if _, rerr := tx.exec(ctx, `ROLLBACK TO write`); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.exec(ctx, `RELEASE write`); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
