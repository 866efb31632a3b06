package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// registerWorkflowRoutes mounts starting, reading, cancelling, reviewing and
// resuming workflow runs. The service checks the roles: viewers read runs,
// editors act on them. Every {id} is a run id or an external execution id.
func (s *Server) registerWorkflowRoutes() {
	s.route("POST /workflow/runs",
		withBody(s, s.workflowService, "StartWorkflowRunRequest", http.StatusCreated, (*workflow.Service).Start))
	s.route("GET /workflow/runs", s.handleListWorkflowRuns)
	s.route("GET /workflow/runs/{id}", withID(s.workflowService, "id", (*workflow.Service).Get))
	// Cancel answers the cancelled run without its graph, and 409 once the
	// run has ended.
	s.route("POST /workflow/runs/{id}/cancel", withID(s.workflowService, "id", (*workflow.Service).Cancel))
	s.route("POST /workflow/runs/{id}/review",
		withIDBody(s, s.workflowService, "ReviewWorkflowRunRequest", (*workflow.Service).Review))
	s.route("POST /workflow/runs/{id}/resume",
		withIDBody(s, s.workflowService, "ResumeWorkflowRunRequest", (*workflow.Service).Resume))
}

// workflowService returns the workflow service, or NOT_FOUND when the
// server was built without one.
func (s *Server) workflowService() (*workflow.Service, error) {
	if s.workflows == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Workflows are not configured on this server.")
	}
	return s.workflows, nil
}

// handleListWorkflowRuns serves one page of runs in the pagination
// envelope, newest first: a canvas's runs, or without promptId those of
// every canvas the caller reaches, filtered by version, status and start
// time; each item is a
// run's summary (workflow.Summary), without its input, steps and output.
// The service checks every parameter, so that one 422 lists each problem.
func (s *Server) handleListWorkflowRuns(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.workflowService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	params := workflow.ListParams{
		CanvasID:  q.String("promptId", false),
		VersionID: q.String("versionId", false),
		Status:    q.String("status", false),
		Since:     q.Time("since"),
		Until:     q.Time("until"),
		Limit:     q.Int("limit", workflow.DefaultListLimit),
		Offset:    q.Int("offset", 0),
	}
	objectLinks := q.Bool("objectLinks", false)
	if err := q.ErrWith(params.Check()); err != nil {
		return err
	}
	if params.Limit == 0 {
		params.Limit = workflow.DefaultListLimit
	}
	runs, total, err := svc.List(r.Context(), params)
	if err != nil {
		return err
	}
	var filters []pageParam
	for _, name := range []string{"promptId", "versionId", "status", "since", "until"} {
		if v := r.URL.Query().Get(name); v != "" {
			filters = append(filters, pageParam{name, v})
		}
	}
	writeJSON(w, http.StatusOK, newPage(runs, total, nil, pageRequest{
		Filters: filters, Limit: params.Limit, Offset: params.Offset, ObjectLinks: objectLinks,
	}))
	return nil
}
