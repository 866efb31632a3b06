package completion

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// MaxFeedbackComment bounds the comment of a run's feedback, in bytes.
const MaxFeedbackComment = 4096

// Feedback is an end user's feedback on a run: a score from 0 (worst) to
// 1 (best) and an optional comment. A run has at most one; setting it
// again replaces its score and comment.
type Feedback struct {
	RunID     string    `json:"runId"`
	Score     float64   `json:"score"`
	Comment   *string   `json:"comment"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// FeedbackParams is the feedback to set on run RunID of a workspace.
type FeedbackParams struct {
	WorkspaceID string
	RunID       string
	Score       float64
	Comment     *string
	By          string
}

// FeedbackStore is the persistence of run feedback.
type FeedbackStore interface {
	// SetFeedback inserts the feedback of a run of the workspace, or
	// replaces its score and comment (its creator and creation time stay);
	// a run of another workspace is NOT_FOUND.
	SetFeedback(ctx context.Context, p FeedbackParams) (*Feedback, error)
	// GetFeedback returns the feedback of a run of the workspace, nil when
	// it has none.
	GetFeedback(ctx context.Context, workspaceID, runID string) (*Feedback, error)
}

// SetFeedback records end-user feedback on a completion run, or replaces
// the run's feedback: once per run, updatable. A score outside 0..1 or a
// comment past MaxFeedbackComment bytes is VALIDATION. It requires the
// editor role and access to the run's canvas; a run of another workspace,
// a task and a workflow version's run are NOT_FOUND.
func (s *Service) SetFeedback(ctx context.Context, runID string, score float64, comment *string) (*Feedback, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var details []canvas.Detail
	if !(score >= 0 && score <= 1) {
		details = append(details, canvas.Detail{Path: "/json/score", Message: "must be a number from 0 to 1"})
	}
	if comment != nil && (len(*comment) > MaxFeedbackComment || !utf8.ValidString(*comment)) {
		details = append(details, canvas.Detail{Path: "/json/comment", Message: "must be at most 4096 bytes of UTF-8"})
	}
	if len(details) > 0 {
		return nil, canvas.Invalid("Invalid feedback.", details...)
	}
	r, err := s.get(ctx, runID, KindCompletion)
	if err != nil {
		return nil, err
	}
	if r.Kind != KindCompletion {
		return nil, canvas.NotFound(KindCompletion)
	}
	return s.store.SetFeedback(ctx, FeedbackParams{WorkspaceID: p.WorkspaceID, RunID: r.ID, Score: score,
		Comment: comment, By: p.Actor()})
}
