package sqlstore

import (
	"context"
	"sort"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// claimQueries are the statements of a claim in one dialect. A job is due
// when it is queued and its run_at has come, or running with an expired
// lease; claim repeats the test, so that a job is never claimed twice even
// if the selection raced. Each statement tests one status at a time, so
// that it reads that status's partial index rather than the whole table.
// dueQueued and dueExpired each read one set of due jobs in the claim's
// order and stop at the limit, and ClaimJobs merges the two: nothing sorts,
// so a claim costs the same whatever the backlog. On Postgres they lock
// what they read, skipping the rows another claim holds (FOR UPDATE SKIP
// LOCKED), so that concurrent claims, in any processes, never take one job
// twice and never wait for each other; a row another claim committed
// meanwhile no longer passes the test when it is locked, and is skipped.
type claimQueries struct {
	anyDue, exhaust, dueQueued, dueExpired, claim string
}

func (d Dialect) claimQueries() claimQueries {
	due := func(test string) string {
		return `SELECT id, run_at, created_at FROM jobs WHERE ` + test + ` AND ` + d.InIDs(`kind`) +
			` ORDER BY run_at, created_at, id LIMIT ?` + d.skipLocked()
	}
	return claimQueries{
		anyDue: `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_at <= ?)
		OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < ?)`,
		exhaust: `UPDATE jobs SET status = 'failed', last_error = 'lease expired after ' || attempts || ' attempts',
		lease_owner = NULL, lease_until = NULL, updated_at = ?
		WHERE id IN (SELECT id FROM jobs WHERE status = 'running' AND lease_until < ? AND attempts >= max_attempts` +
			d.skipLocked() + `)`,
		dueQueued:  due(`status = 'queued' AND run_at <= ?`),
		dueExpired: due(`status = 'running' AND lease_until < ?`),
		claim: `UPDATE jobs SET status = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1,
		updated_at = ?
		WHERE ` + d.InIDs(`id`) + `
		AND ((status = 'queued' AND run_at <= ?) OR (status = 'running' AND lease_until < ?))
		RETURNING ` + JobCols,
	}
}

// ClaimQueries are the claim's statements in dialect d: the writes, and the
// idle poll's read. The SQLite driver prepares them at Open, since every
// claim runs them.
func (d Dialect) ClaimQueries() (writes []string, read string) {
	q := d.claimQueries()
	return []string{q.exhaust, q.dueQueued, q.dueExpired, q.claim}, q.anyDue
}

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

// dueJobs runs the due query q inside tx.
func dueJobs(ctx context.Context, tx *Tx, q string, kinds IDs, n int) ([]dueJob, error) {
	rows, err := tx.Query(ctx, q, tx.Now, kinds, n)
	return RowsOf(rows, err, func(r Rows) (dueJob, error) {
		var j dueJob
		return j, r.Scan(&j.id, &j.runAt, &j.createdAt)
	})
}

// oldestDue merges a and b, each in the claim's order, and returns the ids
// of the first n.
func oldestDue(a, b []dueJob, n int) IDs {
	ids := make(IDs, 0, min(n, len(a)+len(b)))
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
func (s *Store) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*queue.Job, error) {
	if owner == "" {
		return nil, canvas.Invalid("A claim needs an owner.", canvas.Detail{Path: "/owner", Message: "required"})
	}
	if n <= 0 || len(kinds) == 0 {
		return []*queue.Job{}, nil
	}
	// An idle poll is one read, outside any transaction (on SQLite, on the
	// reader pool, which leaves the one writer connection to the writes).
	var anyDue bool
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		return tx.QueryRow(ctx, s.claim.anyDue, tx.Now, tx.Now).Scan(&anyDue)
	})
	if err != nil || !anyDue {
		return []*queue.Job{}, err
	}
	// On SQLite the claim shares its commit with the outcomes and
	// heartbeats of the jobs running meanwhile and with the other lanes'
	// claims (the Jobs group): slots free as jobs end, and each refill
	// would otherwise cost a disk flush of its own.
	var jobs []*queue.Job
	err = s.write(ctx, Jobs, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.Exec(ctx, s.claim.exhaust, tx.Now, tx.Now); err != nil {
			return err
		}
		queued, err := dueJobs(ctx, tx, s.claim.dueQueued, IDs(kinds), n)
		if err != nil {
			return err
		}
		expired, err := dueJobs(ctx, tx, s.claim.dueExpired, IDs(kinds), n)
		if err != nil {
			return err
		}
		due := oldestDue(queued, expired, n)
		if len(due) == 0 {
			jobs = []*queue.Job{}
			return nil // commits what exhaust failed
		}
		rows, err := tx.Query(ctx, s.claim.claim, owner, tx.Now.Add(lease), tx.Now, due, tx.Now, tx.Now)
		jobs, err = RowsOf(rows, err, func(r Rows) (*queue.Job, error) { return ScanJob(r) })
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
