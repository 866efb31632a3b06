package review

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// Page bounds of a list.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// Runs reads the runs items stand for; completion.Store does.
type Runs interface {
	GetRun(ctx context.Context, workspaceID, id string) (*completion.Run, error)
}

// TestCases creates test cases for the principal in ctx;
// testcase.Service does.
type TestCases interface {
	CreateTestCase(ctx context.Context, params testcase.CreateParams) (*testcase.TestCase, error)
}

// Options wire a Service; every field is required.
type Options struct {
	Store Store
	// Canvases reads canvases (for access) and versions (for the messages
	// a run added to its version's).
	Canvases  canvas.Store
	Runs      Runs
	TestCases TestCases
}

// Service is the review queue's API. Every method reads the Principal from
// its context: viewers of an item's canvas read it, editors act on it. A
// canvas of a project the principal cannot access is FORBIDDEN, one of
// another workspace NOT_FOUND (canvas.ReachableCanvas).
type Service struct {
	store     Store
	canvases  canvas.Store
	runs      Runs
	testCases TestCases
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	return &Service{store: opts.Store, canvases: opts.Canvases, runs: opts.Runs, testCases: opts.TestCases}
}

// ListParams select the items to list; every field is optional.
type ListParams struct {
	// PromptID, VersionID and Status keep the items of that canvas (which
	// must be reachable), of that version, in that status.
	PromptID  string
	VersionID string
	Status    string
	// Limit is the page size, 1..MaxListLimit; zero means
	// DefaultListLimit. Offset is the number of items skipped.
	Limit  int
	Offset int
}

// Check returns every problem of params, each at its query parameter
// (/query/promptId, /query/versionId, /query/status, /query/limit,
// /query/offset), or nil. A zero Limit is DefaultListLimit.
func (params ListParams) Check() []canvas.Detail {
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	return canvas.RunQuery{CanvasParam: "promptId", CanvasID: params.PromptID, VersionID: params.VersionID,
		Status: params.Status, Statuses: []string{StatusPending, StatusReviewed},
		Limit: params.Limit, Offset: params.Offset, MaxLimit: MaxListLimit}.Check()
}

// List returns one page of the items of the canvases the principal
// reaches, newest first, and how many params select in all. It requires
// the viewer role; params are checked as Check says (VALIDATION).
func (s *Service) List(ctx context.Context, params ListParams) ([]*Item, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	if details := params.Check(); details != nil {
		return nil, 0, canvas.Invalid("The review queue query is not valid.", details...)
	}
	if params.PromptID != "" {
		if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, params.PromptID); err != nil {
			return nil, 0, err
		}
	}
	items, total, err := s.store.ListReviewItems(ctx, Filter{WorkspaceID: p.WorkspaceID, CanvasID: params.PromptID,
		VersionID: params.VersionID, Status: params.Status, Scope: p.Scope(), Limit: params.Limit, Offset: params.Offset})
	if err != nil {
		return nil, 0, err
	}
	if items == nil {
		items = []*Item{}
	}
	return items, total, nil
}

// Get returns an item. It requires the viewer role and access to the
// item's canvas.
func (s *Service) Get(ctx context.Context, id string) (*Item, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.item(ctx, p, id)
}

// item returns an item whose canvas p reaches.
func (s *Service) item(ctx context.Context, p *canvas.Principal, id string) (*Item, error) {
	if uuid.Validate(id) != nil {
		return nil, canvas.NotFound("review item")
	}
	it, err := s.store.GetReviewItem(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, it.PromptID); err != nil {
		return nil, err
	}
	return it, nil
}

// AddParams queue a run by hand.
type AddParams struct {
	// RunID is a completion run of a canvas; required.
	RunID string `json:"runId"`
}

// Add queues a completion run of a canvas by hand (source manual), for
// example one an end user gave feedback on. It requires the editor role
// and access to the run's canvas. A RunID that is not a UUID is
// VALIDATION; a run that is unknown, of no canvas (a task) or stands for a
// workflow run is NOT_FOUND; a run queued already is CONFLICT.
func (s *Service) Add(ctx context.Context, params AddParams) (*Item, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(params.RunID) != nil {
		return nil, canvas.Invalid("Request failed validation.",
			canvas.Detail{Path: "/json/runId", Message: "must be a UUID"})
	}
	run, err := s.runs.GetRun(ctx, p.WorkspaceID, params.RunID)
	if err != nil {
		return nil, err
	}
	if run.Kind != completion.KindCompletion || run.CanvasID == "" {
		return nil, canvas.NotFound("run")
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, run.CanvasID); err != nil {
		return nil, err
	}
	it := &Item{WorkspaceID: p.WorkspaceID, RunID: run.ID, PromptID: run.CanvasID, VersionID: run.VersionID,
		Status: StatusPending, Source: SourceManual, CreatedBy: p.Actor()}
	if err := s.store.AddReviewItem(ctx, it); err != nil {
		if canvas.ErrorCode(err) == canvas.ECONFLICT {
			return nil, canvas.Errorf(canvas.ECONFLICT, "The run is in the review queue already.")
		}
		return nil, err
	}
	return it, nil
}

// AnnotationInput is a reviewer's verdict: Passed is required, Score is
// from 0 to 1, Comment at most MaxCommentLength characters.
type AnnotationInput struct {
	Passed  *bool    `json:"passed"`
	Score   *float64 `json:"score"`
	Comment *string  `json:"comment"`
}

// Annotate sets an item's annotation and marks it reviewed; an item
// reviewed already gets the new annotation in place of the old one. It
// requires the editor role and access to the item's canvas. A missing
// passed, a score outside 0..1 or a comment too long is VALIDATION naming
// each; an item whose run has not finished yet is CONFLICT.
func (s *Service) Annotate(ctx context.Context, id string, in AnnotationInput) (*Item, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var details []canvas.Detail
	if in.Passed == nil {
		details = append(details, canvas.Detail{Path: "/json/passed", Message: "is required"})
	}
	if in.Score != nil && (math.IsNaN(*in.Score) || *in.Score < 0 || *in.Score > 1) {
		details = append(details, canvas.Detail{Path: "/json/score", Message: "must be between 0 and 1"})
	}
	if in.Comment != nil && utf8.RuneCountInString(*in.Comment) > MaxCommentLength {
		details = append(details, canvas.Detail{Path: "/json/comment",
			Message: fmt.Sprintf("must be at most %d characters", MaxCommentLength)})
	}
	if details != nil {
		return nil, canvas.Invalid("Request failed validation.", details...)
	}
	it, err := s.item(ctx, p, id)
	if err != nil {
		return nil, err
	}
	run, err := s.runs.GetRun(ctx, p.WorkspaceID, it.RunID)
	if err != nil {
		return nil, err
	}
	if !run.Terminal() {
		return nil, canvas.Errorf(canvas.ECONFLICT, "The run has not finished yet.")
	}
	a := Annotation{Passed: *in.Passed, Score: in.Score, AnnotatedBy: p.Actor()}
	if in.Comment != nil {
		a.Comment = *in.Comment
	}
	return s.store.AnnotateReviewItem(ctx, AnnotateParams{WorkspaceID: p.WorkspaceID, ID: it.ID, Annotation: a})
}

// Stats counts the items of a canvas's queue per version. It requires the
// viewer role and access to the canvas; a PromptID that is not a UUID is
// VALIDATION.
func (s *Service) Stats(ctx context.Context, promptID string) ([]*VersionStats, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(promptID) != nil {
		return nil, canvas.Invalid("The review queue query is not valid.",
			canvas.Detail{Path: "/query/promptId", Message: "must be a UUID"})
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, promptID); err != nil {
		return nil, err
	}
	stats, err := s.store.ReviewStats(ctx, p.WorkspaceID, promptID)
	if err != nil {
		return nil, err
	}
	if stats == nil {
		stats = []*VersionStats{}
	}
	return stats, nil
}
