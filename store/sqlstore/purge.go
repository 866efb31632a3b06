package sqlstore

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
)

// Compile-time check that Store implements the retention Store.
var _ retention.Store = (*Store)(nil)

// qLiveJobOf reports whether a queued or running job of a kind serves a
// ref, other than one job.
const qLiveJobOf = `SELECT EXISTS (SELECT 1 FROM jobs WHERE ref_id = ? AND kind = ?
	AND status IN ('queued', 'running') AND id <> ?)`

// purgeQueries are the statements of the purge. Each selects its batch,
// oldest first, through the partial index of ended rows and repeats the
// index's condition word for word, which is what lets SQLite use it; on
// Postgres each skips rows another transaction holds, so that purges in
// several processes never wait for each other.
type purgeQueries struct {
	jobs, deliveries, runs, endedWorkflowRuns, workflowSteps, workflowRuns string
}

// purgeOf are the purge's statements in each dialect.
var purgeOf = [2]purgeQueries{newPurgeQueries(SQLite), newPurgeQueries(Postgres)}

// newPurgeQueries writes the purge's statements in dialect d. A table
// with a rowid is deleted from by rowid on SQLite, by id on Postgres.
func newPurgeQueries(d Dialect) purgeQueries {
	key, skip := `rowid`, d.skipLocked()
	if d.Postgres {
		key = `id`
	}
	return purgeQueries{
		jobs: `DELETE FROM jobs WHERE ` + key + ` IN (SELECT ` + key + ` FROM jobs
			WHERE status IN ('succeeded', 'failed', 'cancelled') AND updated_at < ? ORDER BY updated_at LIMIT ?` + skip + `)`,
		// A delivery's attempts go with it (ON DELETE CASCADE).
		deliveries: `DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries
			WHERE status IN ('succeeded', 'failed') AND updated_at < ? ORDER BY updated_at LIMIT ?` + skip + `)`,
		runs: `DELETE FROM runs WHERE ` + key + ` IN (SELECT ` + key + ` FROM runs
			WHERE status IN ('completed', 'failed') AND completed_at < ? ORDER BY completed_at LIMIT ?` + skip + `)`,
		endedWorkflowRuns: `SELECT id FROM workflow_runs
			WHERE status IN ('completed', 'failed', 'cancelled', 'timeout') AND completed_at < ?
			ORDER BY completed_at LIMIT ?` + skip,
		workflowSteps: `DELETE FROM workflow_steps WHERE ` + d.InIDs(`run_id`),
		workflowRuns:  `DELETE FROM workflow_runs WHERE ` + d.InIDs(`id`),
	}
}

// purgeQ returns the purge's statements in the Store's dialect.
func (s *Store) purgeQ() *purgeQueries {
	if s.d.Postgres {
		return &purgeOf[1]
	}
	return &purgeOf[0]
}

// ScheduleJob enqueues j (see insertJob for its defaults) unless a queued
// or running job of j.Kind serving j.RefID, other than the job except,
// exists; it reports whether it enqueued j. The check and the insert share
// one transaction under a lock on (kind, ref), so that processes starting
// at once schedule one job.
func (s *Store) ScheduleJob(ctx context.Context, j *queue.Job, except string) (bool, error) {
	var enqueued bool
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		enqueued = false
		if err := tx.Lock(ctx, "schedule/"+j.Kind+"/"+j.RefID); err != nil {
			return err
		}
		var live bool
		if err := tx.QueryRow(ctx, qLiveJobOf, j.RefID, j.Kind, except).Scan(&live); err != nil {
			return err
		} else if live {
			return nil
		}
		if err := s.insertJob(ctx, tx, j); err != nil {
			return err
		}
		enqueued = true
		return nil
	})
	return enqueued, err
}

// PurgeJobs deletes at most limit succeeded, failed or cancelled jobs
// last updated before before, oldest first.
func (s *Store) PurgeJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purge(ctx, limit, func(ctx context.Context, tx *Tx) (int64, error) {
		return tx.Exec(ctx, s.purgeQ().jobs, before, limit)
	})
}

// PurgeDeliveries deletes at most limit succeeded or failed delivery log
// rows last updated before before, oldest first, with their attempts.
func (s *Store) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purge(ctx, limit, func(ctx context.Context, tx *Tx) (int64, error) {
		return tx.Exec(ctx, s.purgeQ().deliveries, before, limit)
	})
}

// PurgeRuns deletes at most limit completed or failed runs completed
// before before, oldest first.
func (s *Store) PurgeRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purge(ctx, limit, func(ctx context.Context, tx *Tx) (int64, error) {
		return tx.Exec(ctx, s.purgeQ().runs, before, limit)
	})
}

// PurgeWorkflowRuns deletes at most limit workflow runs in a terminal
// status completed before before, oldest first, with their steps.
func (s *Store) PurgeWorkflowRuns(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purge(ctx, limit, func(ctx context.Context, tx *Tx) (int64, error) {
		q := s.purgeQ()
		rows, err := tx.Query(ctx, q.endedWorkflowRuns, before, limit)
		ids, err := RowsOf(rows, err, func(r Rows) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, q.workflowSteps, IDs(ids)); err != nil {
			return 0, err
		}
		return tx.Exec(ctx, q.workflowRuns, IDs(ids))
	})
}

// purge runs one batch of a purge in its own write transaction and
// returns how many rows it deleted; a limit below one deletes nothing.
func (s *Store) purge(ctx context.Context, limit int, batch func(ctx context.Context, tx *Tx) (int64, error)) (int, error) {
	if limit <= 0 {
		return 0, nil // a negative LIMIT would be none
	}
	var n int64
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		n, err = batch(ctx, tx)
		return err
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}
