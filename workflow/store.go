package workflow

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Store is the persistence the workflow package consumes. Implementations
// set timestamps from one clock reading per transaction and scope reads to
// a workspace: a run of another workspace is NOT_FOUND.
type Store interface {
	// CreateWorkflowRun inserts r with its steps and jobs in one
	// transaction, so that an accepted run always has its jobs. It sets
	// r.ID when empty, CreatedAt and UpdatedAt; r.Deadline is kept as
	// given.
	CreateWorkflowRun(ctx context.Context, r *Run, jobs []*queue.Job) error
	// GetWorkflowRun returns a run of the workspace found by its id or by
	// its external id, with its steps in Seq order.
	GetWorkflowRun(ctx context.Context, workspaceID, id string) (*Run, error)
	// SaveWorkflowSteps writes the state of steps of a run (each replaces
	// the stored step with the same ID), unless the run has ended: then
	// nothing is written and the error is CONFLICT. Concurrent calls may
	// share a commit (group commit); each returns once its write is
	// durable.
	SaveWorkflowSteps(ctx context.Context, workspaceID, runID string, steps []*Step) error
	// ChangeWorkflowRun applies c in one transaction: CONFLICT, and
	// nothing written, unless the run's status is c.From. It returns the
	// run as it is afterwards, steps included.
	ChangeWorkflowRun(ctx context.Context, c *Change) (*Run, error)
	// ListWorkflowRuns returns one page of the workspace's runs that f
	// selects, without their steps, newest first (runs created at the
	// same instant: the later created first), and the number of runs f
	// selects in all. f.Limit and f.Offset are used as given.
	ListWorkflowRuns(ctx context.Context, workspaceID string, f RunFilter) ([]*Run, int, error)
}

// RunFilter selects runs to list: those of a canvas ("" means every
// canvas) and of a version ("" means every version) with a status (""
// means any), created at or after Since and before Until (each when not
// zero), a page of Limit runs after the first Offset.
type RunFilter struct {
	CanvasID  string
	VersionID string
	Status    string
	Since     time.Time
	Until     time.Time
	// Reach, when not nil, keeps the runs of a live canvas of
	// Reach.WorkspaceID that it reaches: one of Reach.Projects (every
	// project when nil), or a personal draft of Reach.UserID.
	Reach  *canvas.Scope
	Limit  int
	Offset int
}

// Change is one status transition of a run with everything that commits
// with it.
type Change struct {
	WorkspaceID string
	RunID       string
	// From is the status the run must be in; To the status it moves to.
	// The Service takes both from the transition table (Next).
	From string
	To   string
	// OutputNodeID, when set, names the run's output step; Error, when
	// set, is the run's error.
	OutputNodeID string
	Error        *Error
	// Steps are written with the change (as SaveWorkflowSteps does).
	Steps []*Step
	// Jobs are enqueued with the change; before they are, every queued or
	// running job serving the run whose kind is one of CancelKinds is
	// cancelled, except the job ExceptJobID (the caller's own). Jobs of
	// other kinds serving the run (its notification's deliveries) are
	// left alone.
	Jobs        []*queue.Job
	CancelKinds []string
	ExceptJobID string
	// Notify are the deliveries of the change's notification, each
	// written with its log row.
	Notify []webhook.Outgoing
}
