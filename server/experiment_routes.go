package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/experiment"
)

// Page bounds of the experiment lists.
const (
	defaultExperimentLimit = 20
	maxExperimentLimit     = 100
	defaultResultLimit     = 50
	maxResultLimit         = 500
)

// registerExperimentRoutes mounts experiments, their results, compare and
// annotations, and saved evaluators.
func (s *Server) registerExperimentRoutes() {
	s.route("POST /experiments",
		withBody(s, s.experimentService, "StartExperimentRequest", http.StatusAccepted, (*experiment.Service).Start))
	s.route("GET /experiments", s.handleListExperiments)
	s.route("GET /experiments/{id}", withID(s.experimentService, "id", (*experiment.Service).Get))
	s.route("POST /experiments/{id}/cancel", withID(s.experimentService, "id", (*experiment.Service).Cancel))
	s.route("GET /experiments/{id}/results", s.handleExperimentResults)
	s.route("GET /experiments/{id}/compare", s.handleCompareExperiment)
	s.route("POST /experiments/{id}/results/{resultId}/annotation", s.handleAnnotateResult)
	s.route("POST /evaluators",
		withBody(s, s.experimentService, "CreateEvaluatorRequest", http.StatusCreated, (*experiment.Service).CreateEvaluator))
	s.route("GET /evaluators", s.handleListEvaluators)
}

// experimentService returns the experiment service, or NOT_FOUND when the
// server was built without one.
func (s *Server) experimentService() (*experiment.Service, error) {
	if s.experiments == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Experiments are not configured on this server.")
	}
	return s.experiments, nil
}

// handleListExperiments serves one page of a canvas's experiments, newest
// first, in the pagination envelope.
func (s *Server) handleListExperiments(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.experimentService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	promptID := q.UUID("promptId", true)
	limit, offset := pageBounds(q, defaultExperimentLimit, maxExperimentLimit)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	list, total, err := svc.List(r.Context(), experiment.ListQuery{PromptID: promptID, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(list, total, nil, pageRequest{Filters: filters("promptId", promptID),
		Limit: limit, Offset: offset, ObjectLinks: objectLinks}))
	return nil
}

// handleExperimentResults serves one page of an experiment's results, in
// the order they were written, in the pagination envelope.
func (s *Server) handleExperimentResults(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.experimentService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	q := newQuery(r)
	versionID := q.UUID("versionId", false)
	testCaseID := q.UUID("testCaseId", false)
	limit, offset := pageBounds(q, defaultResultLimit, maxResultLimit)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	list, total, err := svc.Results(r.Context(), experiment.ResultsQuery{ExperimentID: id, VersionID: versionID,
		TestCaseID: testCaseID, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(list, total, nil, pageRequest{Filters: filters("versionId", versionID,
		"testCaseId", testCaseID), Limit: limit, Offset: offset, ObjectLinks: objectLinks}))
	return nil
}

// handleCompareExperiment pairs two versions' results: baseline and
// candidate are each a version id of the experiment or the environment it
// was resolved from.
func (s *Server) handleCompareExperiment(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.experimentService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	q := newQuery(r)
	baseline := q.String("baseline", true)
	candidate := q.String("candidate", true)
	if err := q.Err(); err != nil {
		return err
	}
	c, err := svc.Compare(r.Context(), id, baseline, candidate)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleAnnotateResult records a person's review of a result and answers
// the result.
func (s *Server) handleAnnotateResult(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.experimentService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	resultID, err := pathUUID(r, "resultId")
	if err != nil {
		return err
	}
	var body experiment.AnnotationParams
	if err := s.decodeJSON(r, "AnnotateResultRequest", &body); err != nil {
		return err
	}
	res, err := svc.Annotate(r.Context(), id, resultID, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleListEvaluators serves one page of a canvas's saved evaluators, by
// name, in the pagination envelope.
func (s *Server) handleListEvaluators(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.experimentService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	promptID := q.UUID("promptId", true)
	limit, offset := pageBounds(q, defaultExperimentLimit, maxExperimentLimit)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	list, total, err := svc.ListEvaluators(r.Context(), experiment.EvaluatorQuery{PromptID: promptID, Limit: limit,
		Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(list, total, nil, pageRequest{Filters: filters("promptId", promptID),
		Limit: limit, Offset: offset, ObjectLinks: objectLinks}))
	return nil
}
