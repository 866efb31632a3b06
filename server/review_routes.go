package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/review"
)

// registerReviewRoutes mounts the review queue of live runs: viewers of a
// canvas read its queue, editors annotate, add runs and make test cases.
func (s *Server) registerReviewRoutes() {
	s.route("GET /review-queue", s.handleListReviewItems)
	s.route("POST /review-queue",
		withBody(s, s.reviewService, "AddReviewItemRequest", http.StatusCreated, (*review.Service).Add))
	s.route("GET /review-queue/stats", s.handleReviewStats)
	s.route("GET /review-queue/{id}", withID(s.reviewService, "id", (*review.Service).Get))
	s.route("POST /review-queue/{id}/annotation",
		withIDBody(s, s.reviewService, "ReviewAnnotationRequest", (*review.Service).Annotate))
	s.route("POST /review-queue/{id}/test-case", s.handleReviewTestCase)
}

// previewHeader marks a completion request as a preview (the console's
// playground sends it with "true"): the run is recorded as any other, but
// it is not a live run, so its canvas's inferencesPercentage never samples
// it for review.
const previewHeader = "Canvas-Preview"

// liveRun reports whether a completion request is a live run of the API
// surface (completion.RunParams.Live): every one not marked a preview.
func liveRun(r *http.Request) bool {
	return r.Header.Get(previewHeader) != "true"
}

// reviewService returns the review service, or NOT_FOUND when the server
// was built without one.
func (s *Server) reviewService() (*review.Service, error) {
	if s.review == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "The review queue is not configured on this server.")
	}
	return s.review, nil
}

// handleListReviewItems serves one page of the review queue, newest
// first, in the pagination envelope.
func (s *Server) handleListReviewItems(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.reviewService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	params := review.ListParams{
		PromptID:  q.String("promptId", false),
		VersionID: q.String("versionId", false),
		Status:    q.String("status", false),
		Limit:     q.Int("limit", review.DefaultListLimit),
		Offset:    q.Int("offset", 0),
	}
	objectLinks := q.Bool("objectLinks", false)
	if err := q.ErrWith(params.Check()); err != nil {
		return err
	}
	items, total, err := svc.List(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(items, total, nil, pageRequest{Filters: filters("promptId", params.PromptID,
		"versionId", params.VersionID, "status", params.Status), Limit: params.Limit, Offset: params.Offset,
		ObjectLinks: objectLinks}))
	return nil
}

// reviewStats is the answer of GET /review-queue/stats.
type reviewStats struct {
	PromptID string                 `json:"promptId"`
	Versions []*review.VersionStats `json:"versions"`
}

// handleReviewStats serves the counts of a canvas's queue per version.
func (s *Server) handleReviewStats(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.reviewService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	promptID := q.UUID("promptId", true)
	if err := q.Err(); err != nil {
		return err
	}
	stats, err := svc.Stats(r.Context(), promptID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reviewStats{PromptID: promptID, Versions: stats})
	return nil
}

// handleReviewTestCase makes a test case from an item's run: 201 with the
// test case.
func (s *Server) handleReviewTestCase(w http.ResponseWriter, r *http.Request) error {
	tc, err := callWithID(r, s.reviewService, "id", (*review.Service).CreateTestCase)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, tc)
	return nil
}
