package completion

import (
	"context"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Store is the persistence the completion package consumes: run records,
// written together with the queue jobs they cause. Implementations set
// timestamps from one clock reading per transaction, keep ID when it is set
// (and assign one when empty), and scope every read to a workspace: a run of
// another workspace is NOT_FOUND.
type Store interface {
	// CreateRun inserts r and, when job is not nil, the job that executes it,
	// in one transaction, so that an accepted run always has its job. It
	// sets CreatedAt and UpdatedAt, and CompletedAt when r is already
	// terminal (a sync run recorded once answered).
	CreateRun(ctx context.Context, r *Run, job *queue.Job) error
	// GetRun returns a run of the workspace.
	GetRun(ctx context.Context, workspaceID, id string) (*Run, error)
	// StartRun moves a queued or running run to running and returns it; a
	// terminal run is CONFLICT (a re-run job leaves it alone).
	StartRun(ctx context.Context, workspaceID, id string) (*Run, error)
	// FinishRun writes r's final state (status, result, error, usage,
	// latency, model) and, when notify is not nil, the delivery job of its
	// notification, in one transaction. A run that is already terminal is
	// CONFLICT and nothing is written, so a re-run job never notifies twice.
	FinishRun(ctx context.Context, r *Run, notify *queue.Job) error
}
