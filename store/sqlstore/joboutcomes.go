package sqlstore

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// JobCols are the columns ScanJob reads, in order, from jobs.
const JobCols = `id, workspace_id, kind, ref_id, payload, status, attempts, max_attempts, run_at,
	COALESCE(lease_owner, ''), lease_until, last_error, trace, created_at, updated_at`

// ScanJob reads a job of JobCols from r, a row of the shared code or of a
// driver's claim that scans as the shared code does.
func ScanJob(r Row) (*queue.Job, error) {
	var j queue.Job
	return &j, r.Scan(&j.ID, &j.WorkspaceID, &j.Kind, &j.RefID, rawCol{&j.Payload}, &j.Status, &j.Attempts,
		&j.MaxAttempts, &j.RunAt, &j.LeaseOwner, &j.LeaseUntil, &j.LastError, &j.Trace, &j.CreatedAt, &j.UpdatedAt)
}

// GetJob returns a job by id.
func (s *Store) GetJob(ctx context.Context, id string) (*queue.Job, error) {
	return getOne(ctx, s, "job", ScanJob, `SELECT `+JobCols+` FROM jobs WHERE id = ?`, id)
}

// leased runs an UPDATE of the running job id whose lease owner holds:
// set, whose parameters are set(now)'s values. When no row changed the
// job is NOT_FOUND if it does not exist and CONFLICT otherwise: its lease
// was lost. due(now) says whether the job is due again after the write,
// which wakes the workers of other processes at the commit. The outcomes
// of concurrent calls may share commits (the Jobs group), each of them
// failing alone; every call returns once its own write is durable.
func (s *Store) leased(ctx context.Context, id, owner, set string, args func(now time.Time) []any, due func(now time.Time) bool) error {
	return s.write(ctx, Jobs, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE jobs SET `+set+` WHERE id = ? AND lease_owner = ? AND status = 'running'`,
			append(args(tx.Now), id, owner)...)
		if err != nil {
			return err
		}
		if n == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?)`, id).Scan(&exists); err != nil {
				return err
			} else if !exists {
				return canvas.NotFound("job")
			}
			return canvas.Errorf(canvas.ECONFLICT, "The lease of job %s is not held by %s.", id, owner)
		}
		if due != nil && due(tx.Now) {
			return tx.JobDue(ctx)
		}
		return nil
	})
}

// HeartbeatJob extends owner's lease to now+lease.
func (s *Store) HeartbeatJob(ctx context.Context, id, owner string, lease time.Duration) error {
	return s.leased(ctx, id, owner, `lease_until = ?, updated_at = ?`, func(now time.Time) []any {
		return []any{s.d.Instant(now.Add(lease)), now}
	}, nil)
}

// CompleteJob marks the job succeeded and clears its lease.
func (s *Store) CompleteJob(ctx context.Context, id, owner string) error {
	return s.leased(ctx, id, owner, `status = 'succeeded', lease_owner = NULL, lease_until = NULL, updated_at = ?`,
		func(now time.Time) []any { return []any{now} }, nil)
}

// RetryJob queues the job again, due at p.RunAt, recording p.LastError;
// when that time has come the commit wakes the workers.
func (s *Store) RetryJob(ctx context.Context, p queue.RetryJobParams) error {
	runAt := s.d.Instant(p.RunAt)
	return s.leased(ctx, p.ID, p.Owner, `status = 'queued', run_at = ?, last_error = ?, lease_owner = NULL,
		lease_until = NULL, updated_at = ?`, func(now time.Time) []any {
		return []any{runAt, p.LastError, now}
	}, func(now time.Time) bool { return !runAt.After(now) })
}

// FailJob marks the job failed for good, recording p.LastError.
func (s *Store) FailJob(ctx context.Context, p queue.FailJobParams) error {
	return s.leased(ctx, p.ID, p.Owner, `status = 'failed', last_error = ?, lease_owner = NULL, lease_until = NULL,
		updated_at = ?`, func(now time.Time) []any { return []any{p.LastError, now} }, nil)
}

// ReleaseJob queues the job again, due now, and takes back the claim's
// attempt; the commit wakes the workers.
func (s *Store) ReleaseJob(ctx context.Context, id, owner string) error {
	return s.leased(ctx, id, owner, `status = 'queued', run_at = ?,
		attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, lease_owner = NULL,
		lease_until = NULL, updated_at = ?`, func(now time.Time) []any { return []any{now, now} },
		func(time.Time) bool { return true })
}

// CancelJobs cancels every queued or running job serving refID and returns
// how many it cancelled; an empty refID cancels nothing.
func (s *Store) CancelJobs(ctx context.Context, refID string) (int, error) {
	if refID == "" {
		return 0, nil
	}
	var n int
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		n, err = cancelJobs(ctx, tx, refID)
		return err
	})
	return n, err
}
