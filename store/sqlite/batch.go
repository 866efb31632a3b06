package sqlite

import (
	"context"
	"errors"
	"runtime"

	"github.com/promptcanvas/promptcanvas/env"
)

// Group commit. With synchronous=FULL every commit waits for the disk, and
// one commit per publish caps publishing at the disk's commit rate.
// Concurrent Publish calls therefore queue to one batcher goroutine, which
// runs every waiting publish in one write transaction, each under its own
// savepoint so that a failing publish fails alone, commits once, and then
// answers every caller. A caller is answered only after the commit that
// holds its publication, so durability and Publish's contract are those of
// one transaction per publish.

// maxPublishBatch bounds how many publishes share one commit.
const maxPublishBatch = 64

// collectYields is how many times the batcher yields the processor, when no
// publish is waiting, before it runs the batch it has. Callers answered by
// the previous commit are usually about to publish again; without the
// yields, batches alternate between the few callers that were not in the
// last one and the rest, and hold about half of the publishers on average.
// A yield costs microseconds; a commit costs a disk flush.
const collectYields = 3

// errClosed answers a Publish made after Close.
var errClosed = errors.New("sqlite: database is closed")

// publishRequest is one Publish waiting for its batch.
type publishRequest struct {
	ctx  context.Context
	p    env.PublishParams
	done chan publishResult // buffered: the batcher never blocks on it
}

type publishResult struct {
	pub     *env.Publication
	created bool
	err     error
}

func (db *DB) startBatcher() {
	db.publishes = make(chan *publishRequest)
	db.stop = make(chan struct{})
	db.batcherDone = make(chan struct{})
	go db.runBatcher()
}

// Publish makes the version the active publication of the environment: the
// replaced publication gets unpublishedAt and the new one the next Seq.
// When the version is already active nothing changes and created is false.
// The version must be a live version of the canvas, and a custom
// environment must exist. Concurrent calls share commits (group commit);
// each returns only once its publication is durable.
func (db *DB) Publish(ctx context.Context, p env.PublishParams) (*env.Publication, bool, error) {
	req := &publishRequest{ctx: ctx, p: p, done: make(chan publishResult, 1)}
	select {
	case db.publishes <- req:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case <-db.stop:
		return nil, false, errClosed
	}
	// The batcher answers every request it took, even while closing.
	r := <-req.done
	return r.pub, r.created, r.err
}

// runBatcher takes the waiting publishes, up to maxPublishBatch, runs them
// as one batch, and repeats until Close. The channel is unbuffered, so a
// request is either taken, and answered, or never sent.
func (db *DB) runBatcher() {
	defer close(db.batcherDone)
	batch := make([]*publishRequest, 0, maxPublishBatch)
	for {
		select {
		case req := <-db.publishes:
			batch = append(batch[:0], req)
		case <-db.stop:
			return
		}
		yields := 0
	collect:
		for len(batch) < maxPublishBatch {
			select {
			case req := <-db.publishes:
				batch = append(batch, req)
			default:
				if yields == collectYields {
					break collect
				}
				yields++
				runtime.Gosched()
			}
		}
		db.publishBatch(batch)
	}
}

// publishBatch runs a batch in one write transaction and answers each
// request. A request whose context ended before its turn is answered with
// the context's error and publishes nothing; when the commit fails, every
// publish of the batch fails with it.
func (db *DB) publishBatch(batch []*publishRequest) {
	results := make([]publishResult, len(batch))
	defer func() {
		for i, req := range batch {
			req.done <- results[i]
		}
	}()
	// The batch serves several callers, so no one caller's context may
	// cancel it; each caller's context is checked before its turn.
	ctx := context.Background()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		for i := range results {
			results[i].err = err
		}
		return
	}
	defer tx.Rollback()
	for i, req := range batch {
		if err := req.ctx.Err(); err != nil {
			results[i].err = err
			continue
		}
		results[i] = publishSavepoint(ctx, tx, req.p)
	}
	if err := tx.Commit(); err != nil {
		for i := range results {
			results[i] = publishResult{err: err}
		}
	}
}

// publishSavepoint runs one publish of a batch under a savepoint, and rolls
// back to it when the publish fails, so the batch's other publishes stand.
func publishSavepoint(ctx context.Context, tx *Tx, p env.PublishParams) publishResult {
	if _, err := tx.exec(ctx, `SAVEPOINT publish`); err != nil {
		return publishResult{err: err}
	}
	pub, created, err := publishTx(ctx, tx, p)
	if err != nil {
		if _, rerr := tx.exec(ctx, `ROLLBACK TO publish`); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.exec(ctx, `RELEASE publish`); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return publishResult{pub: pub, created: created, err: err}
}
