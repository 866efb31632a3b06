package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// registerTaskRoutes mounts one-off prompt runs. handleCreateTask is a
// method so that middleware (idempotency) can wrap it.
func (s *Server) registerTaskRoutes() {
	s.route("POST /v1/tasks", s.idempotent(s.handleCreateTask))
	s.route("GET /v1/tasks", s.handleListTasks)
	s.route("GET /v1/tasks/{id}", s.handleGetTask)
}

// handleListTasks serves one page of the workspace's tasks in the
// pagination envelope, newest first; each item is a task as GET
// /v1/tasks/{id} answers it.
func (s *Server) handleListTasks(w http.ResponseWriter, r *http.Request) error {
	return s.listRuns(w, r, (*completion.Service).ListTasks, (*completion.Service).TaskTotals)
}

// handleCreateTask queues a task (wire.TaskRequest): 202 wire.Accepted
// {id, status}.
func (s *Server) handleCreateTask(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	var req wire.TaskRequest
	if err := s.decodeJSON(r, "TaskRequest", &req); err != nil {
		return err
	}
	run, err := svc.RunTask(r.Context(), completion.TaskParams{
		Prompt: req.Prompt, Model: req.Model, WebhookURL: req.WebhookURL, Variables: req.Variables,
		ForwardHeaders: webhook.ForwardedHeaders(r.Header),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, wire.Accepted{ID: run.ID, Status: run.Status})
	return nil
}

// handleGetTask returns a task run.
func (s *Server) handleGetTask(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	run, err := svc.GetTask(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}
