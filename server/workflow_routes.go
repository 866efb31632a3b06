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
