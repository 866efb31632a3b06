package workflow

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Page bounds of List.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// Statuses returns every run status, in the order a run may reach them.
func Statuses() []string {
	return []string{StatusPending, StatusRunning, StatusWaitingForReview, StatusRequiresAction,
		StatusCompleted, StatusFailed, StatusCancelled, StatusTimeout}
}

// ListParams select the runs to list.
type ListParams struct {
	// CanvasID, when set, is the canvas whose runs are listed; otherwise
	// the runs of every canvas the principal reaches are.
	CanvasID string
	// VersionID, when set, keeps the runs of that version only.
	VersionID string
	// Status, when set, keeps the runs in that status only.
	Status string
	// Since and Until, when not zero, keep the runs started at or after
	// Since and before Until.
	Since time.Time
	Until time.Time
	// Limit is the page size, 1..MaxListLimit; zero means
	// DefaultListLimit. Offset is the number of runs skipped.
	Limit  int
	Offset int
}

// Summary is a run as a list shows it: the run without its input, steps,
// output and graph, which GET /workflow/runs/{id} (Service.Get) gives.
type Summary struct {
	ID              string     `json:"id"`
	PromptID        string     `json:"promptId"`
	PromptVersionID string     `json:"promptVersionId"`
	Environment     string     `json:"environment"`
	Status          string     `json:"status"`
	StartedAt       time.Time  `json:"startedAt"`
	CompletedAt     *time.Time `json:"completedAt"`
	Deadline        time.Time  `json:"deadline"`
	StartNodeID     *string    `json:"startNodeId"`
	EndNodeID       *string    `json:"endNodeId"`
	Error           *Error     `json:"error"`
}

// List returns one page of runs, newest first, as summaries, and the
// number of runs the filter selects in all: the runs of one canvas, which
// must be reachable (NOT_FOUND or FORBIDDEN as the canvas is), or, without
// CanvasID, the runs of every live canvas the principal reaches. It
// requires the viewer role. A malformed CanvasID or VersionID, a Status
// that is not a run status, Until not after Since, a Limit outside
// 0..MaxListLimit or a negative Offset is VALIDATION, with each problem at
// its query parameter (/query/promptId, /query/versionId, /query/status,
// /query/until, /query/limit, /query/offset).
func (s *Service) List(ctx context.Context, params ListParams) ([]*Summary, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	if details := params.Check(); details != nil {
		return nil, 0, canvas.Invalid("The workflow run query is not valid.", details...)
	}
	f := RunFilter{CanvasID: params.CanvasID, VersionID: params.VersionID, Status: params.Status,
		Since: params.Since, Until: params.Until, Limit: params.Limit, Offset: params.Offset}
	if params.CanvasID != "" {
		if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, params.CanvasID); err != nil {
			return nil, 0, err
		}
	} else {
		scope := p.Scope()
		f.Reach = &scope
	}
	runs, total, err := s.store.ListWorkflowRuns(ctx, p.WorkspaceID, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Summary, len(runs))
	for i, run := range runs {
		out[i] = summary(run)
	}
	return out, total, nil
}

// summary returns run as List shows it.
func summary(run *Run) *Summary {
	sum := &Summary{ID: run.PublicID(), PromptID: run.CanvasID, PromptVersionID: run.VersionID,
		Environment: run.Environment, Status: run.Status, StartedAt: run.CreatedAt.UTC(),
		CompletedAt: run.CompletedAt, Deadline: run.Deadline.UTC(), Error: run.Error}
	if run.StartNodeID != "" {
		sum.StartNodeID = &run.StartNodeID
	}
	if run.EndNodeID != "" {
		sum.EndNodeID = &run.EndNodeID
	}
	return sum
}

// Check returns every problem of the parameters of a list, each at its
// query parameter (/query/promptId, /query/versionId, /query/status,
// /query/until, /query/limit, /query/offset), or nil. A zero Limit is
// DefaultListLimit.
func (params ListParams) Check() []canvas.Detail {
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	q := canvas.RunQuery{CanvasParam: "promptId", CanvasID: params.CanvasID, VersionID: params.VersionID,
		Status: params.Status, Statuses: Statuses(), Since: params.Since, Until: params.Until,
		Limit: params.Limit, Offset: params.Offset, MaxLimit: MaxListLimit}
	return q.Check()
}
