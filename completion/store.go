package completion

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Store is the persistence the completion package consumes: run records,
// written together with the queue jobs they cause. Implementations set
// timestamps from one clock reading per transaction, keep ID when it is set
// (and assign one when empty), and scope every read to a workspace: a run of
// another workspace is NOT_FOUND.
type Store interface {
	// CreateRun inserts p.Run with p.Job, when it is not nil, p.Notify and
	// the review item p.Sample takes, in one transaction, so that an
	// accepted run always has its job and a recorded run its notification. It sets CreatedAt and UpdatedAt, and
	// CompletedAt when the run is already terminal (a sync run recorded
	// once answered).
	CreateRun(ctx context.Context, p CreateRunParams) error
	// GetRun returns a run of the workspace.
	GetRun(ctx context.Context, workspaceID, id string) (*Run, error)
	// StartRun moves a queued or running run to running and returns it; a
	// terminal run is CONFLICT (a re-run job leaves it alone).
	StartRun(ctx context.Context, workspaceID, id string) (*Run, error)
	// FinishRun writes p.Run's final state (status, result, error, usage,
	// latency, model) and the deliveries of its notification, p.Notify, in
	// one transaction. A run that is already terminal is CONFLICT and
	// nothing is written, so a re-run job never notifies twice.
	FinishRun(ctx context.Context, p FinishRunParams) error
	// ListRuns returns one page of the runs f selects, newest first (runs
	// created at the same instant: the later created first), and how many
	// f selects in all, read in one snapshot. f.Limit and f.Offset are
	// used as given.
	ListRuns(ctx context.Context, f RunFilter) ([]*Run, int, error)
	// RunTotals sums every run f selects, ignoring f.Limit and f.Offset,
	// in all and by canvas and version (see Totals), in one read; it
	// returns at most maxGroups groups.
	RunTotals(ctx context.Context, f RunFilter, maxGroups int) (*Totals, error)
	FeedbackStore
}

// RunFilter selects the runs of a workspace to list: those of one kind,
// narrowed by every filter that is set, a page of Limit runs after the
// first Offset.
type RunFilter struct {
	WorkspaceID string
	// Kind is KindCompletion or KindTask.
	Kind string
	// CanvasID, VersionID and Status, when not empty, keep the runs with
	// that canvas, version or status.
	CanvasID  string
	VersionID string
	Status    string
	// Since and Until, when not zero, keep the runs created at or after
	// Since and before Until.
	Since time.Time
	Until time.Time
	// Scope keeps, of the runs of a canvas, those of a live canvas of
	// Scope.WorkspaceID that it reaches: one of Scope.Projects (every
	// project when nil), or a personal draft of Scope.UserID.
	Scope canvas.Scope
	// Actor, when not empty, keeps of the runs of no canvas (tasks) only
	// those it created.
	Actor  string
	Limit  int
	Offset int
}

// CreateRunParams is a run to insert with what commits with it.
type CreateRunParams struct {
	Run *Run
	// Job, when not nil, executes the run (an async run); a job without
	// a RefID serves the run.
	Job *queue.Job
	// Notify are the deliveries of the notification of a run recorded
	// terminal (a sync run), each written with its log row.
	Notify []webhook.Outgoing
	// Sample, when not nil, draws the run for its canvas's review queue:
	// the store reads the canvas's inferencesPercentage in the same
	// transaction and, when Sample.Takes it, inserts a pending review
	// item of the run (source "sampled") with the run.
	Sample *Sample
}

// FinishRunParams is a run's final state with the deliveries of its
// notification, each written with its log row; none when no one is told.
type FinishRunParams struct {
	Run    *Run
	Notify []webhook.Outgoing
}
