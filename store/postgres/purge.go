package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
)

// Compile-time check that DB implements the retention Store.
var _ retention.Store = (*DB)(nil)

// Statements of the purge. Each selects its batch, oldest first, through
// the partial index of ended rows, and skips rows another transaction
// holds, so that purges in several processes never wait for each other.
const (
	qLiveJobOf = `SELECT EXISTS (SELECT 1 FROM jobs WHERE ref_id = $1 AND kind = $2
		AND status IN ('queued', 'running') AND id <> $3)`
	qPurgeJobs = `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs
		WHERE status IN ('succeeded', 'failed', 'cancelled') AND updated_at < $1 ORDER BY updated_at LIMIT $2
		FOR UPDATE SKIP LOCKED)`
	// A delivery's attempts go with it (ON DELETE CASCADE).
	qPurgeDeliveries = `DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries
		WHERE status IN ('succeeded', 'failed') AND updated_at < $1 ORDER BY updated_at LIMIT $2
		FOR UPDATE SKIP LOCKED)`
	qPurgeRuns = `DELETE FROM runs WHERE id IN (SELECT id FROM runs
		WHERE status IN ('completed', 'failed') AND completed_at < $1 ORDER BY completed_at LIMIT $2
		FOR UPDATE SKIP LOCKED)`
	qEndedWorkflowRuns = `SELECT id FROM workflow_runs
		WHERE status IN ('completed', 'failed', 'cancelled', 'timeout') AND completed_at < $1
		ORDER BY completed_at LIMIT $2 FOR UPDATE SKIP LOCKED`
	qPurgeWorkflowSteps = `DELETE FROM workflow_steps WHERE run_id = ANY($1)`
	qPurgeWorkflowRuns  = `DELETE FROM workflow_runs WHERE id = ANY($1)`
)

// ScheduleJob enqueues j (see insertJob for its defaults) unless a queued
// or running job of j.Kind serving j.RefID, other than the job except,
// exists; it reports whether it enqueued j. The check and the insert share
// one transaction under an advisory lock on (kind, ref), so that processes
// starting at once schedule one job.
func (db *DB) ScheduleJob(ctx context.Context, j *queue.Job, except string) (bool, error) {
	var enqueued bool
	err := db.write(ctx, func(tx *Tx) error {
		enqueued = false
		if err := lockKey(ctx, tx, "schedule/"+j.Kind+"/"+j.RefID); err != nil {
			return err
		}
		var live bool
		if err := tx.QueryRow(ctx, qLiveJobOf, j.RefID, j.Kind, except).Scan(&live); err != nil {
			return err
		} else if live {
			return nil
		}
		if err := insertJob(ctx, tx, j); err != nil {
			return err
		}
		enqueued = true
		return nil
	})
	return enqueued, err
}

// PurgeJobs deletes at most limit succeeded, failed or cancelled jobs
// last updated before before, oldest first.
func (db *DB) PurgeJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (pgconn.CommandTag, error) {
		return tx.Exec(ctx, qPurgeJobs, instant(before), limit)
	})
}

// PurgeDeliveries deletes at most limit succeeded or failed delivery log
// rows last updated before before, oldest first, with their attempts.
func (db *DB) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (pgconn.CommandTag, error) {
		return tx.Exec(ctx, qPurgeDeliveries, instant(before), limit)
	})
}

// PurgeRuns deletes at most limit completed or failed runs completed
// before before, oldest first.
func (db *DB) PurgeRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (pgconn.CommandTag, error) {
		return tx.Exec(ctx, qPurgeRuns, instant(before), limit)
	})
}

// PurgeWorkflowRuns deletes at most limit workflow runs in a terminal
// status completed before before, oldest first, with their steps.
func (db *DB) PurgeWorkflowRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (pgconn.CommandTag, error) {
		rows, err := tx.Query(ctx, qEndedWorkflowRuns, instant(before), limit)
		runIDs, err := rowsOf(rows, err, func(r pgx.Rows) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		if _, err := tx.Exec(ctx, qPurgeWorkflowSteps, runIDs); err != nil {
			return pgconn.CommandTag{}, err
		}
		return tx.Exec(ctx, qPurgeWorkflowRuns, runIDs)
	})
}

// purge runs one batch of a purge in its own transaction and returns how
// many rows it deleted; a limit below one deletes nothing.
func (db *DB) purge(ctx context.Context, limit int, batch func(tx *Tx) (pgconn.CommandTag, error)) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := db.write(ctx, func(tx *Tx) error {
		tag, err := batch(tx)
		n = int(tag.RowsAffected())
		return err
	})
	return n, err
}
