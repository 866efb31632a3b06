package completion

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Page bounds of ListRuns and ListTasks.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// Statuses returns every run status, in the order a run reaches them.
func Statuses() []string {
	return []string{StatusQueued, StatusRunning, StatusCompleted, StatusFailed}
}

// ListParams select the runs to list. Every field is optional.
type ListParams struct {
	// CanvasID, VersionID and Status keep the runs of that canvas, of that
	// version, in that status; the canvas must be reachable.
	CanvasID  string
	VersionID string
	Status    string
	// Since and Until keep the runs created at or after Since and before
	// Until.
	Since time.Time
	Until time.Time
	// Limit is the page size, 1..MaxListLimit; zero means
	// DefaultListLimit. Offset is the number of runs skipped.
	Limit  int
	Offset int
}

// ListRuns returns one page of the workspace's completion runs, newest
// first, and how many the filter selects in all. It requires the viewer
// role and lists only the runs of canvases the principal reaches (a
// completion of a workflow version is its workflow run, listed by the
// workflow service). A malformed CanvasID or VersionID, a Status that is
// not a run status, Until not after Since, a Limit outside 0..MaxListLimit
// or a negative Offset is VALIDATION, each problem at its query parameter;
// a CanvasID the principal cannot reach is NOT_FOUND or FORBIDDEN as the
// canvas is.
func (s *Service) ListRuns(ctx context.Context, params ListParams) ([]*Run, int, error) {
	return s.list(ctx, KindCompletion, params)
}

// ListTasks returns one page of the workspace's tasks, newest first, and
// how many the filter selects in all. It requires the viewer role. A task
// belongs to no canvas, so CanvasID and VersionID select none, and a
// project-restricted principal lists only the tasks it created. The
// parameters are checked as ListRuns checks them.
func (s *Service) ListTasks(ctx context.Context, params ListParams) ([]*Run, int, error) {
	return s.list(ctx, KindTask, params)
}

func (s *Service) list(ctx context.Context, kind string, params ListParams) ([]*Run, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	f, err := s.filter(ctx, p, kind, params)
	if err != nil {
		return nil, 0, err
	}
	runs, total, err := s.store.ListRuns(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if runs == nil {
		runs = []*Run{}
	}
	return runs, total, nil
}

// filter checks params and returns the filter of the runs of kind they
// select for p.
func (s *Service) filter(ctx context.Context, p *canvas.Principal, kind string, params ListParams) (RunFilter, error) {
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	if details := params.Check(); details != nil {
		return RunFilter{}, canvas.Invalid("The run query is not valid.", details...)
	}
	if params.CanvasID != "" {
		if _, err := s.canvas(ctx, p, params.CanvasID); err != nil {
			return RunFilter{}, err
		}
	}
	f := RunFilter{WorkspaceID: p.WorkspaceID, Kind: kind, CanvasID: params.CanvasID, VersionID: params.VersionID,
		Status: params.Status, Since: params.Since, Until: params.Until, Scope: p.Scope(),
		Limit: params.Limit, Offset: params.Offset}
	if p.Restricted() {
		f.Actor = p.Actor()
	}
	return f, nil
}

// Check returns every problem of the parameters of a list, each at its
// query parameter (/query/canvasId, /query/versionId, /query/status,
// /query/until, /query/limit, /query/offset), or nil. A zero Limit is
// DefaultListLimit.
func (params ListParams) Check() []canvas.Detail {
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	q := canvas.RunQuery{CanvasParam: "canvasId", CanvasID: params.CanvasID, VersionID: params.VersionID,
		Status: params.Status, Statuses: Statuses(), Since: params.Since, Until: params.Until,
		Limit: params.Limit, Offset: params.Offset, MaxLimit: MaxListLimit}
	return q.Check()
}
