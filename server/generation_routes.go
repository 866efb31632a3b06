package server

import (
	"context"
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// registerGenerationRoutes mounts running test cases, reading and aborting
// generations, and reading executions.
func (s *Server) registerGenerationRoutes() {
	s.route("POST /test-case/{id}/run", s.handleRunTestCase)
	s.route("POST /test-case/run", s.handleRunTestCases)
	s.route("GET /test-case/generations/{id}", s.handleGetGeneration)
	s.route("POST /test-case/generations/{id}/abort", s.handleAbortGeneration)
	s.route("GET /test-case/executions/{executionId}", s.handleGetExecution)
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

// handleRunTestCases runs a batch of test cases under one execution id.
func (s *Server) handleRunTestCases(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.generationsService()
	if err != nil {
		return err
	}
	var params testcase.BatchParams
	if err := s.decodeJSON(r, "RunTestCasesRequest", &params); err != nil {
		return err
	}
	res, err := svc.RunBatch(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleGetGeneration(w http.ResponseWriter, r *http.Request) error {
	return s.generationByID(w, r, (*testcase.GenerationService).GetGeneration)
}

// handleAbortGeneration aborts a generation that has not finished and
// answers it; 409 once it has.
func (s *Server) handleAbortGeneration(w http.ResponseWriter, r *http.Request) error {
	return s.generationByID(w, r, (*testcase.GenerationService).AbortGeneration)
}

// generationByID answers the generation op returns for the path's id.
func (s *Server) generationByID(w http.ResponseWriter, r *http.Request,
	op func(*testcase.GenerationService, context.Context, string) (*testcase.Generation, error)) error {
	svc, err := s.generationsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	g, err := op(svc, r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, g)
	return nil
}

// handleGetExecution summarises an execution: counts by status and the
// pass rate of the graded generations.
func (s *Server) handleGetExecution(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.generationsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "executionId")
	if err != nil {
		return err
	}
	e, err := svc.GetExecution(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}
