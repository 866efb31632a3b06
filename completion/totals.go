package completion

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// MaxTotalsGroups bounds the groups of Totals: the canvases and versions
// with the most runs come first.
const MaxTotalsGroups = 100

// Sum adds up runs: how many, their tokens, the sum of the costs that are
// known (nil when none is), and how many completed runs have no cost
// because no price of their model is known (Unpriced). Runs that are
// queued, running or failed before a model answered have no cost and are
// not unpriced.
type Sum struct {
	Count        int         `json:"count"`
	InputTokens  int64       `json:"inputTokens"`
	OutputTokens int64       `json:"outputTokens"`
	Cost         *model.Cost `json:"cost"`
	Unpriced     int         `json:"unpriced"`
}

// GroupSum is the Sum of the runs of one version of a canvas; both are
// empty for runs of no canvas (tasks).
type GroupSum struct {
	CanvasID  string `json:"canvasId,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	Sum
}

// Totals sum every run a list selects, not only one page: in all, and by
// canvas and version. Groups holds at most MaxTotalsGroups groups, those
// with the most runs first (then by canvas and version id); GroupCount
// says how many there are in all.
type Totals struct {
	Sum
	Groups     []GroupSum `json:"groups"`
	GroupCount int        `json:"groupCount"`
}

// RunTotals returns the totals of the completion runs that params select,
// ignoring its page bounds. It requires the viewer role and checks params
// as ListRuns does.
func (s *Service) RunTotals(ctx context.Context, params ListParams) (*Totals, error) {
	return s.totals(ctx, KindCompletion, params)
}

// TaskTotals returns the totals of the tasks that params select, ignoring
// its page bounds; tasks belong to no canvas, so they make one group. It
// requires the viewer role and checks params as ListTasks does.
func (s *Service) TaskTotals(ctx context.Context, params ListParams) (*Totals, error) {
	return s.totals(ctx, KindTask, params)
}

func (s *Service) totals(ctx context.Context, kind string, params ListParams) (*Totals, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	f, err := s.filter(ctx, p, kind, params)
	if err != nil {
		return nil, err
	}
	t, err := s.store.RunTotals(ctx, f, MaxTotalsGroups)
	if err != nil {
		return nil, err
	}
	if t.Groups == nil {
		t.Groups = []GroupSum{}
	}
	return t, nil
}
