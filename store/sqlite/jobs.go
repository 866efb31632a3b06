package sqlite

import (
	"context"
	"sort"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

// Compile-time check that DB implements the queue's Store.
var _ queue.Store = (*DB)(nil)

// Statements of the claim. A job is due when it is queued and its run_at has
// come, or running with an expired lease; qClaim repeats the test so that a
// job is never claimed twice even if the selection raced. Each statement
// tests one status at a time, so that it reads that status's partial index
// (migration 015) rather than the whole table. qDueQueued and qDueExpired
// each read one set of due jobs in the claim's order and stop at the
// limit; ClaimJobs merges the two. Nothing sorts, so a claim costs the same
// whatever the backlog.
const (
	qExhaust = `UPDATE jobs SET status = 'failed', last_error = 'lease expired after ' || attempts || ' attempts',
		lease_owner = NULL, lease_until = NULL, updated_at = ?1
		WHERE status = 'running' AND lease_until < ?1 AND attempts >= max_attempts`
	qAnyDue = `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_at <= ?1)
		OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < ?1)`
	qDueQueued = `SELECT id, run_at, created_at FROM jobs
		WHERE status = 'queued' AND run_at <= ?1 AND kind IN (SELECT value FROM json_each(?2))
		ORDER BY run_at, created_at, id LIMIT ?3`
	qDueExpired = `SELECT id, run_at, created_at FROM jobs
		WHERE status = 'running' AND lease_until < ?1 AND kind IN (SELECT value FROM json_each(?2))
		ORDER BY run_at, created_at, id LIMIT ?3`
	qClaim = `UPDATE jobs SET status = 'running', lease_owner = ?1, lease_until = ?2, attempts = attempts + 1,
		updated_at = ?3
		WHERE id IN (SELECT value FROM json_each(?4))
		AND ((status = 'queued' AND run_at <= ?3) OR (status = 'running' AND lease_until < ?3))
		RETURNING ` + sqlstore.JobCols
)

// dueJob is a due job's place in the claim's order, its columns as stored:
// their text sorts as SQLite sorts it.
type dueJob struct{ id, runAt, createdAt string }

func (a dueJob) before(b dueJob) bool {
	if a.runAt != b.runAt {
		return a.runAt < b.runAt
	}
	if a.createdAt != b.createdAt {
		return a.createdAt < b.createdAt
	}
	return a.id < b.id
}

// dueJobs runs qDueQueued or qDueExpired inside tx.
func dueJobs(ctx context.Context, tx *Tx, q, now, kinds string, n int) ([]dueJob, error) {
	rows, err := tx.query(ctx, q, now, kinds, n)
	return sqlstore.RowsOf(sqlRows{rows}, err, func(r sqlstore.Rows) (dueJob, error) {
		var j dueJob
		return j, r.Scan(&j.id, &j.runAt, &j.createdAt)
	})
}

// oldestDue merges a and b, each in the claim's order, and returns the ids
// of the first n.
func oldestDue(a, b []dueJob, n int) []string {
	ids := make([]string, 0, min(n, len(a)+len(b)))
	for len(ids) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].before(b[0])) {
			ids, a = append(ids, a[0].id), a[1:]
		} else {
			ids, b = append(ids, b[0].id), b[1:]
		}
	}
	return ids
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
	// An idle poll reads on the reader pool and leaves the one writer
	// connection to the writes.
	var anyDue bool
	if err := db.readStmts[qAnyDue].QueryRowContext(ctx, formatTime(db.Now())).Scan(&anyDue); err != nil {
		return nil, err
	} else if !anyDue {
		return []*queue.Job{}, nil
	}
	// The claim shares its commit with the outcomes and heartbeats of the
	// jobs running meanwhile (sqlstore's Jobs group) and with the other
	// lanes' claims, under its own savepoint: slots free as jobs
	// end, and each refill would otherwise cost a disk flush of its own.
	var jobs []*queue.Job
	err := db.groupCommit(ctx, &db.jobCommits, func(ctx context.Context, tx *Tx) error {
		now := formatTime(tx.now)
		if _, err := tx.exec(ctx, qExhaust, now); err != nil {
			return err
		}
		kindList := idList(kinds)
		queued, err := dueJobs(ctx, tx, qDueQueued, now, kindList, n)
		if err != nil {
			return err
		}
		expired, err := dueJobs(ctx, tx, qDueExpired, now, kindList, n)
		if err != nil {
			return err
		}
		due := oldestDue(queued, expired, n)
		if len(due) == 0 {
			jobs = []*queue.Job{}
			return nil // commits what qExhaust failed
		}
		rows, err := tx.query(ctx, qClaim, owner, formatTime(tx.now.Add(lease)), now, idList(due))
		jobs, err = sqlstore.RowsOf(sqlRows{rows}, err, func(r sqlstore.Rows) (*queue.Job, error) { return sqlstore.ScanJob(r) })
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
