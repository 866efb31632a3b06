package review

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Item statuses: an item is pending until it is annotated.
const (
	StatusPending  = "pending"
	StatusReviewed = "reviewed"
)

// Item sources: drawn by the canvas's inferencesPercentage, or added by
// hand.
const (
	SourceSampled = "sampled"
	SourceManual  = "manual"
)

// Item is one run in the review queue of its canvas. A run is queued at
// most once.
type Item struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"-"`
	RunID       string `json:"runId"`
	// PromptID and VersionID are the canvas and version the run ran.
	PromptID  string `json:"promptId"`
	VersionID string `json:"versionId"`
	// Status is StatusPending or StatusReviewed.
	Status string `json:"status"`
	// Source is SourceSampled or SourceManual.
	Source string `json:"source"`
	// Annotation is the reviewer's verdict, nil while pending.
	Annotation *Annotation `json:"annotation,omitempty"`
	// CreatedBy is who ran the run (sampled) or queued it (manual).
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Annotation is a reviewer's verdict on an item's run.
type Annotation struct {
	// Passed marks the run's output good (true) or bad (false).
	Passed bool `json:"passed"`
	// Score, from 0 to 1, grades the output; nil when none was given.
	Score *float64 `json:"score,omitempty"`
	// Comment is free text, at most MaxCommentLength characters.
	Comment     string    `json:"comment,omitempty"`
	AnnotatedBy string    `json:"annotatedBy"`
	AnnotatedAt time.Time `json:"annotatedAt"`
}

// MaxCommentLength bounds an annotation's comment, in characters.
const MaxCommentLength = 10000

// VersionStats are the counts of one version's items in a canvas's
// queue.
type VersionStats struct {
	VersionID string `json:"versionId"`
	Pending   int    `json:"pending"`
	Reviewed  int    `json:"reviewed"`
	// Good and Bad split the reviewed items by their annotation's Passed.
	Good int `json:"good"`
	Bad  int `json:"bad"`
	// MeanScore is the mean of the scores given, nil when none was.
	MeanScore *float64 `json:"meanScore"`
}

// Store is the persistence of the review queue. The items of sampled runs
// are inserted by the completion store with their runs
// (completion.CreateRunParams.Sample). Implementations scope every read
// and write to a workspace: an item of another workspace is NOT_FOUND.
type Store interface {
	// AddReviewItem inserts it (ID assigned when empty, CreatedAt and
	// UpdatedAt set); a run that is queued already is CONFLICT.
	AddReviewItem(ctx context.Context, it *Item) error
	// GetReviewItem returns an item of the workspace.
	GetReviewItem(ctx context.Context, workspaceID, id string) (*Item, error)
	// ListReviewItems returns one page of the items f selects, newest
	// first, and how many it selects in all, read in one snapshot.
	ListReviewItems(ctx context.Context, f Filter) ([]*Item, int, error)
	// AnnotateReviewItem sets an item's annotation (AnnotatedAt from the
	// transaction's clock), marks it reviewed and returns it.
	AnnotateReviewItem(ctx context.Context, p AnnotateParams) (*Item, error)
	// ReviewStats counts the items of a canvas per version, the versions
	// with the most recent items first.
	ReviewStats(ctx context.Context, workspaceID, canvasID string) ([]*VersionStats, error)
}

// Filter selects the items of a workspace to list: those of canvases of
// Scope, narrowed by every filter that is set, a page of Limit items after
// the first Offset.
type Filter struct {
	WorkspaceID string
	// CanvasID, VersionID and Status, when not empty, keep the items of
	// that canvas, version or status.
	CanvasID  string
	VersionID string
	Status    string
	// Scope keeps the items of live canvases of Scope.WorkspaceID that it
	// reaches.
	Scope  canvas.Scope
	Limit  int
	Offset int
}

// AnnotateParams are an annotation to set on item ID.
type AnnotateParams struct {
	WorkspaceID string
	ID          string
	Annotation  Annotation
}
