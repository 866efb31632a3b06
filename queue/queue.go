package queue

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Job statuses.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Job is one unit of background work.
type Job struct {
	ID          string
	WorkspaceID string
	// Kind selects the handler, for example "completion.run".
	Kind string
	// RefID is the id of the record the job serves (a completion run, a
	// generation...), so that the record's jobs can be cancelled together.
	RefID   string
	Payload json.RawMessage
	Status  string
	// Attempts counts the claims so far, this one included while running.
	Attempts    int
	MaxAttempts int
	// RunAt is when the job becomes due.
	RunAt      time.Time
	LeaseOwner string
	LeaseUntil *time.Time
	LastError  string
	// Trace is the trace context (a W3C traceparent) of the work that
	// enqueued the job, so that the job's spans join that trace; empty
	// when none.
	Trace     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DefaultMaxAttempts bounds the claims of a job that sets no MaxAttempts.
const DefaultMaxAttempts = 10

// Store is the persistence the queue consumes. A lease is identified by its
// owner: an operation on a job whose lease another owner holds, or that is
// no longer running, is CONFLICT (the lease was lost).
type Store interface {
	// EnqueueJob inserts a job by itself; it sets ID when empty, Status
	// queued, RunAt now when zero, and MaxAttempts when zero. It writes
	// nothing but the job, whatever its kind: stores that write a record
	// and its job together take the job in that record's own method
	// instead.
	EnqueueJob(ctx context.Context, j *Job) error
	// ClaimJobs leases up to n due jobs of the given kinds to owner until
	// now+lease: queued jobs whose RunAt has come, and running jobs whose
	// lease has expired. Each claim increments Attempts. Oldest RunAt first.
	ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*Job, error)
	// HeartbeatJob extends owner's lease to now+lease.
	HeartbeatJob(ctx context.Context, id, owner string, lease time.Duration) error
	// CompleteJob marks the job succeeded.
	CompleteJob(ctx context.Context, id, owner string) error
	// RetryJob puts the job p.ID back in the queue, due at p.RunAt,
	// recording p.LastError.
	RetryJob(ctx context.Context, p RetryJobParams) error
	// FailJob marks the job p.ID failed for good, recording p.LastError.
	FailJob(ctx context.Context, p FailJobParams) error
	// ReleaseJob gives the job back, due now, without counting the claim as
	// an attempt: for a worker that shuts down before finishing it.
	ReleaseJob(ctx context.Context, id, owner string) error
	// CancelJobs cancels every queued or running job serving refID and
	// returns how many it cancelled. A running job's handler learns it on
	// its next heartbeat (CONFLICT) and stops.
	CancelJobs(ctx context.Context, refID string) (int, error)
	// GetJob returns a job by id.
	GetJob(ctx context.Context, id string) (*Job, error)
}

// RetryJobParams name a running job whose lease Owner holds, to queue
// again, due at RunAt, after an attempt that failed with LastError.
type RetryJobParams struct {
	ID        string
	Owner     string
	RunAt     time.Time
	LastError string
}

// FailJobParams name a running job whose lease Owner holds, to fail for
// good with LastError.
type FailJobParams struct {
	ID        string
	Owner     string
	LastError string
}

// Handler does the work of one job. It returns nil when the job is done, a
// Permanent error when retrying cannot help, and any other error to be
// retried with backoff. Its context is cancelled when the lease is lost
// (the job was cancelled or claimed by another worker) or the worker stops.
type Handler func(ctx context.Context, j *Job) error

// Permanent wraps err so that the worker fails the job at once instead of
// retrying it.
func Permanent(err error) error { return &permanentError{err} }

// IsPermanent reports whether err was wrapped by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// RetryAfter wraps err so that the worker retries the job no sooner than
// after d (for example a webhook receiver's Retry-After).
func RetryAfter(err error, d time.Duration) error { return &retryAfterError{err, d} }

// RetryDelay returns the delay asked for by RetryAfter, if any.
func RetryDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }
