package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// registerGenerationRoutes mounts running test cases, reading and aborting
// generations, and reading executions.
func (s *Server) registerGenerationRoutes() {
	s.route("POST /test-case/{id}/run", s.handleRunTestCase)
	s.route("POST /test-case/run",
		withBody(s, s.generationsService, "RunTestCasesRequest", http.StatusOK, (*testcase.GenerationService).RunBatch))
	s.route("GET /test-case/generations/{id}",
		withID(s.generationsService, "id", (*testcase.GenerationService).GetGeneration))
	// Abort answers the aborted generation, and 409 once it has finished.
	s.route("POST /test-case/generations/{id}/abort",
		withID(s.generationsService, "id", (*testcase.GenerationService).AbortGeneration))
	s.route("GET /test-case/executions/{executionId}",
		withID(s.generationsService, "executionId", (*testcase.GenerationService).GetExecution))
}

// generationsService returns the generation service, or NOT_FOUND when the
// server was built without one.
func (s *Server) generationsService() (*testcase.GenerationService, error) {
	if s.generations == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Test case runs are not configured on this server.")
	}
	return s.generations, nil
}

// handleRunTestCase runs one test case against a version: 200 with
// {executionId, testCaseIds, generationId, generationIds} once the
// generation is committed initializing with its job.
func (s *Server) handleRunTestCase(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.generationsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var req struct {
		PromptVersionID string `json:"promptVersionId"`
	}
	if err := s.decodeJSON(r, "RunTestCaseRequest", &req); err != nil {
		return err
	}
	res, err := svc.Run(r.Context(), id, req.PromptVersionID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
