package env

import (
	"context"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// MaxStatsRuns bounds the runs SplitStats reads of each variant, so that a
// request's work does not grow with a publication's traffic: a variant
// with more runs is reported over MaxStatsRuns of them, and Truncated.
const MaxStatsRuns = 100_000

// SplitStats are the results of a publication's runs, per variant.
type SplitStats struct {
	PublicationID   string `json:"publicationId"`
	EnvironmentName string `json:"environmentName"`
	IsActive        bool   `json:"isActive"`
	// Variants has one entry per entry of the publication's split (one,
	// variant 0, for a publication of one version), in order.
	Variants []VariantStats `json:"variants"`
}

// VariantStats are the results of the runs one variant of a publication
// served.
type VariantStats struct {
	Variant   int    `json:"variant"`
	VersionID string `json:"versionId"`
	Weight    int    `json:"weight"`
	// Runs counts the runs recorded; Errors those that failed.
	Runs   int `json:"runs"`
	Errors int `json:"errors"`
	// LatencyP50Ms and LatencyP95Ms are nearest-rank percentiles of the
	// latency of the completed runs, nil when none completed.
	LatencyP50Ms *int64 `json:"latencyP50Ms"`
	LatencyP95Ms *int64 `json:"latencyP95Ms"`
	// Cost is the sum of the costs of the runs whose cost is known, in
	// Currency.
	Cost     float64 `json:"cost"`
	Currency string  `json:"currency"`
	// FeedbackMean is the mean end-user feedback score of the runs that
	// have one (nil when none does); FeedbackCount counts them.
	FeedbackMean  *float64 `json:"feedbackMean"`
	FeedbackCount int      `json:"feedbackCount"`
	// Truncated says that the variant has more than MaxStatsRuns runs and
	// that these figures are of MaxStatsRuns of them.
	Truncated bool `json:"truncated"`
}

// SplitStatsParams select a publication of an environment: PublicationID,
// or the active publication when it is empty.
type SplitStatsParams struct {
	CanvasID      string
	EnvName       string
	PublicationID string
}

// SplitStats reports, per variant of a publication of the named
// environment, the runs it served: their count, errors, latency, cost and
// end-user feedback. The publication is params.PublicationID (NOT_FOUND
// unless it is one of the environment's) or the active one (NOT_FOUND when
// nothing is published). It requires the viewer role and access to the
// canvas.
func (s *Service) SplitStats(ctx context.Context, params SplitStatsParams) (*SplitStats, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e, err := s.store.FindEnvironment(ctx, FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID, Name: name})
	if err != nil {
		return nil, err
	}
	id := params.PublicationID
	if id == "" {
		if e.ActivePublicationID == "" {
			return nil, canvas.Errorf(canvas.ENOTFOUND, "Nothing is published to the %s environment.", e.Name)
		}
		id = e.ActivePublicationID
	} else if uuid.Validate(id) != nil {
		return nil, canvas.NotFound("publication")
	}
	pub, err := s.store.GetPublication(ctx, c.WorkspaceID, e.ID, id)
	if err != nil {
		return nil, err
	}
	split := pub.Split
	if split == nil {
		split = []SplitEntry{{VersionID: pub.VersionID, Weight: splitWeightSum}}
	}
	vs, err := s.store.SplitStats(ctx, c.WorkspaceID, pub.PublicationID, len(split))
	if err != nil {
		return nil, err
	}
	for i := range vs {
		vs[i].VersionID, vs[i].Weight = split[i].VersionID, split[i].Weight
	}
	return &SplitStats{PublicationID: pub.PublicationID, EnvironmentName: e.Name, IsActive: pub.IsActive, Variants: vs}, nil
}
