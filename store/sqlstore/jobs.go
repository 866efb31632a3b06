package sqlstore

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// QInsertJob inserts a job; the SQLite driver prepares it at Open.
const QInsertJob = `INSERT INTO jobs (id, workspace_id, kind, ref_id, payload, status, attempts,
	max_attempts, run_at, last_error, created_at, updated_at, delivery_id, trace)
	VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, '', ?, ?, ?, ?)`

// insertJob inserts j as queued in tx. An empty ID gets a new one, a zero
// RunAt means now, MaxAttempts defaults to queue.DefaultMaxAttempts; a job
// without a kind is INVALID. The job carries the trace context of ctx
// when it has none of its own.
func (s *Store) insertJob(ctx context.Context, tx *Tx, j *queue.Job) error {
	return s.insertJobOf(ctx, tx, j, "")
}

// insertJobOf is insertJob for a job that sends the delivery deliveryID
// (none when empty), which it records as the job's delivery_id: the
// delivery's log row ends with the job.
func (s *Store) insertJobOf(ctx context.Context, tx *Tx, j *queue.Job, deliveryID string) error {
	if j.Kind == "" {
		return canvas.Invalid("A job needs a kind.", canvas.Detail{Path: "/kind", Message: "required"})
	}
	if j.ID == "" {
		j.ID = tx.NewID()
	}
	if j.RunAt.IsZero() {
		j.RunAt = tx.Now
	}
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = queue.DefaultMaxAttempts
	}
	j.RunAt = s.d.Instant(j.RunAt)
	j.Status, j.Attempts, j.LeaseOwner, j.LeaseUntil, j.LastError = queue.StatusQueued, 0, "", nil, ""
	j.CreatedAt, j.UpdatedAt = tx.Now, tx.Now
	j.Trace = s.jobTrace(ctx, j.Trace)
	var delivery any
	if deliveryID != "" {
		delivery = deliveryID
	}
	if _, err := tx.Exec(ctx, QInsertJob, j.ID, j.WorkspaceID, j.Kind, j.RefID, nullRaw(j.Payload), j.Status,
		j.MaxAttempts, j.RunAt, tx.Now, tx.Now, delivery, j.Trace); err != nil {
		return err
	}
	if !j.RunAt.After(tx.Now) {
		return tx.JobDue(ctx)
	}
	return nil
}

// jobTrace is own, or else the trace context of ctx as the Observer
// writes it into a job (none without an Observer).
func (s *Store) jobTrace(ctx context.Context, own string) string {
	if own != "" || s.observer == nil {
		return own
	}
	if o := s.observer(); o != nil {
		return o.JobTrace(ctx)
	}
	return own
}

// EnqueueJob inserts a job by itself; see insertJob for the defaults.
func (s *Store) EnqueueJob(ctx context.Context, j *queue.Job) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error { return s.insertJob(ctx, tx, j) })
}

// cancelJobs cancels, inside tx, every queued or running job serving refID
// and returns how many it cancelled, so that a record's own state change
// and the cancellation of its jobs commit together.
func cancelJobs(ctx context.Context, tx *Tx, refID string) (int, error) {
	n, err := tx.Exec(ctx, `UPDATE jobs SET status = 'cancelled', lease_owner = NULL, lease_until = NULL,
		updated_at = ? WHERE ref_id = ? AND status IN ('queued', 'running')`, tx.Now, refID)
	return int(n), err
}
