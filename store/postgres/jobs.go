package postgres

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

// Compile-time check that DB implements the queue's Store.
var _ queue.Store = (*DB)(nil)

// Statements of the claim. A job is due when it is queued and its run_at
// has come, or running with an expired lease. qDueQueued and qDueExpired
// each read one set of due jobs in the claim's order from its partial index
// and lock them, skipping the rows another claim holds (FOR UPDATE SKIP
// LOCKED), so that concurrent claims, in any processes, never take one job
// twice and never wait for each other; a row another claim committed
// meanwhile no longer passes the test when it is locked, and is skipped.
// ClaimJobs merges the two.
const (
	qExhaust = `UPDATE jobs SET status = 'failed', last_error = 'lease expired after ' || attempts || ' attempts',
		lease_owner = NULL, lease_until = NULL, updated_at = $1
		WHERE id IN (SELECT id FROM jobs WHERE status = 'running' AND lease_until < $1 AND attempts >= max_attempts
			FOR UPDATE SKIP LOCKED)`
	qAnyDue = `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_at <= $1)
		OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < $1)`
	qDueQueued = `SELECT id, run_at, created_at FROM jobs
		WHERE status = 'queued' AND run_at <= $1 AND kind = ANY($2)
		ORDER BY run_at, created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`
	qDueExpired = `SELECT id, run_at, created_at FROM jobs
		WHERE status = 'running' AND lease_until < $1 AND kind = ANY($2)
		ORDER BY run_at, created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`
	qClaim = `UPDATE jobs SET status = 'running', lease_owner = $1, lease_until = $2, attempts = attempts + 1,
		updated_at = $3
		WHERE id = ANY($4)
		AND ((status = 'queued' AND run_at <= $3) OR (status = 'running' AND lease_until < $3))
		RETURNING ` + sqlstore.JobCols
)

// dueJob is a due job's place in the claim's order.
type dueJob struct {
	id               string
	runAt, createdAt time.Time
}

func (a dueJob) before(b dueJob) bool {
	if !a.runAt.Equal(b.runAt) {
		return a.runAt.Before(b.runAt)
	}
	if !a.createdAt.Equal(b.createdAt) {
		return a.createdAt.Before(b.createdAt)
	}
	return a.id < b.id
}

// dueJobs runs qDueQueued or qDueExpired inside tx.
func dueJobs(ctx context.Context, tx *Tx, q string, kinds []string, n int) ([]dueJob, error) {
	rows, err := tx.Query(ctx, q, tx.now, kinds, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (dueJob, error) {
		var j dueJob
		return j, r.Scan(&j.id, &j.runAt, &j.createdAt)
	})
}

// oldestDue merges a and b, each in the claim's order, and returns the ids
// of the first n.
func oldestDue(a, b []dueJob, n int) []string {
	out := make([]string, 0, min(n, len(a)+len(b)))
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].before(b[0])) {
			out, a = append(out, a[0].id), a[1:]
		} else {
			out, b = append(out, b[0].id), b[1:]
		}
	}
	return out
}

// ClaimJobs leases up to n due jobs of kinds to owner until now+lease. When
// a read finds no job due of any kind it returns at once; otherwise, in one
// write transaction, running jobs whose lease expired after their last
// allowed attempt are failed first ("lease expired after N attempts"), then
// the oldest due jobs are claimed, each claim incrementing Attempts. The
// result is ordered by RunAt, oldest first.
func (db *DB) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*queue.Job, error) {
	if owner == "" {
		return nil, canvas.Invalid("A claim needs an owner.", canvas.Detail{Path: "/owner", Message: "required"})
	}
	if n <= 0 || len(kinds) == 0 {
		return []*queue.Job{}, nil
	}
	// An idle poll is one read.
	var anyDue bool
	if err := db.pool.QueryRow(ctx, qAnyDue, instant(db.Now())).Scan(&anyDue); err != nil {
		return nil, err
	} else if !anyDue {
		return []*queue.Job{}, nil
	}
	var jobs []*queue.Job
	err := db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, qExhaust, tx.now); err != nil {
			return err
		}
		queued, err := dueJobs(ctx, tx, qDueQueued, kinds, n)
		if err != nil {
			return err
		}
		expired, err := dueJobs(ctx, tx, qDueExpired, kinds, n)
		if err != nil {
			return err
		}
		due := oldestDue(queued, expired, n)
		if len(due) == 0 {
			jobs = []*queue.Job{}
			return nil // commits what qExhaust failed
		}
		rows, err := tx.Query(ctx, qClaim, owner, instant(tx.now.Add(lease)), tx.now, due)
		if err != nil {
			return err
		}
		jobs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*queue.Job, error) { return sqlstore.ScanJob(r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(jobs, func(a, b int) bool {
		if !jobs[a].RunAt.Equal(jobs[b].RunAt) {
			return jobs[a].RunAt.Before(jobs[b].RunAt)
		}
		if !jobs[a].CreatedAt.Equal(jobs[b].CreatedAt) {
			return jobs[a].CreatedAt.Before(jobs[b].CreatedAt)
		}
		return jobs[a].ID < jobs[b].ID
	})
	return jobs, nil
}
