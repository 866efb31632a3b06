package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
)

// Compile-time check that DB implements the retention Store.
var _ retention.Store = (*DB)(nil)

// Statements of the purge. Each selects its batch, oldest first, through
// the partial index of ended rows (migration 014) and repeats the index's
// condition word for word, which is what lets SQLite use it.
const (
	qLiveJobOf = `SELECT EXISTS (SELECT 1 FROM jobs WHERE ref_id = ?1 AND kind = ?2
		AND status IN ('queued', 'running') AND id <> ?3)`
	qPurgeJobs = `DELETE FROM jobs WHERE rowid IN (SELECT rowid FROM jobs
		WHERE status IN ('succeeded', 'failed', 'cancelled') AND updated_at < ?1 ORDER BY updated_at LIMIT ?2)`
	// A delivery's attempts go with it (ON DELETE CASCADE).
	qPurgeDeliveries = `DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries
		WHERE status IN ('succeeded', 'failed') AND updated_at < ?1 ORDER BY updated_at LIMIT ?2)`
	qPurgeRuns = `DELETE FROM runs WHERE rowid IN (SELECT rowid FROM runs
		WHERE status IN ('completed', 'failed') AND completed_at < ?1 ORDER BY completed_at LIMIT ?2)`
	qEndedWorkflowRuns = `SELECT id FROM workflow_runs
		WHERE status IN ('completed', 'failed', 'cancelled', 'timeout') AND completed_at < ?1
		ORDER BY completed_at LIMIT ?2`
	qPurgeWorkflowSteps = `DELETE FROM workflow_steps WHERE run_id IN (SELECT value FROM json_each(?1))`
	qPurgeWorkflowRuns  = `DELETE FROM workflow_runs WHERE id IN (SELECT value FROM json_each(?1))`
)

// ScheduleJob enqueues j (see insertJob for its defaults) unless a queued
// or running job of j.Kind serving j.RefID, other than the job except,
// exists; it reports whether it enqueued j. The check and the insert share
// one write transaction, so two processes starting at once schedule one
// job.
func (db *DB) ScheduleJob(ctx context.Context, j *queue.Job, except string) (bool, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var live bool
	if err := tx.queryRow(ctx, qLiveJobOf, j.RefID, j.Kind, except).Scan(&live); err != nil {
		return false, err
	} else if live {
		return false, nil
	}
	if err := insertJob(ctx, tx, j); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// PurgeJobs deletes at most limit succeeded, failed or cancelled jobs
// last updated before before, oldest first.
func (db *DB) PurgeJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (sql.Result, error) {
		return tx.exec(ctx, qPurgeJobs, formatTime(before), limit)
	})
}

// PurgeDeliveries deletes at most limit succeeded or failed delivery log
// rows last updated before before, oldest first, with their attempts.
func (db *DB) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (sql.Result, error) {
		return tx.exec(ctx, qPurgeDeliveries, formatTime(before), limit)
	})
}

// PurgeRuns deletes at most limit completed or failed runs completed
// before before, oldest first.
func (db *DB) PurgeRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (sql.Result, error) {
		return tx.exec(ctx, qPurgeRuns, formatTime(before), limit)
	})
}

// PurgeWorkflowRuns deletes at most limit workflow runs in a terminal
// status completed before before, oldest first, with their steps.
func (db *DB) PurgeWorkflowRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.purge(ctx, limit, func(tx *Tx) (sql.Result, error) {
		rows, err := tx.query(ctx, qEndedWorkflowRuns, formatTime(before), limit)
		ids, err := rowsOf(rows, err, func(r *sql.Rows) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return nil, err
		}
		if _, err := tx.exec(ctx, qPurgeWorkflowSteps, idList(ids)); err != nil {
			return nil, err
		}
		return tx.exec(ctx, qPurgeWorkflowRuns, idList(ids))
	})
}

// purge runs one batch of a purge in its own write transaction and
// returns how many rows it deleted; a limit below one deletes nothing.
func (db *DB) purge(ctx context.Context, limit int, batch func(tx *Tx) (sql.Result, error)) (int, error) {
	if limit <= 0 {
		return 0, nil // a negative LIMIT would be none
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := batch(tx)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return int(n), tx.Commit()
}
