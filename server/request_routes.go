package server

import (
	"context"
	"net/http"

	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/env"
)

// registerRequestRoutes mounts the publication requests: how a protected
// environment is published to.
func (s *Server) registerRequestRoutes() {
	s.route("POST /publication-requests", s.handleCreateRequest)
	s.route("GET /publication-requests", s.handleListRequests)
	s.route("GET /publication-requests/{id}", s.handleGetRequest)
	s.route("POST /publication-requests/{id}/approve", s.handleDecision((*env.Service).ApproveRequest))
	s.route("POST /publication-requests/{id}/reject", s.handleDecision((*env.Service).RejectRequest))
	s.route("POST /publication-requests/{id}/withdraw", s.handleDecision((*env.Service).WithdrawRequest))
}

// handleCreateRequest makes a pending publication request, of a version
// or of a split: 201 with it.
func (s *Server) handleCreateRequest(w http.ResponseWriter, r *http.Request) error {
	var req wire.PublicationRequestParams
	if err := s.decodeJSON(r, "PublicationRequestParams", &req); err != nil {
		return err
	}
	pr, err := s.environments.CreateRequest(r.Context(), env.CreateRequestInput{CanvasID: req.ResourceID,
		EnvName: req.EnvName, VersionID: req.VersionID, Split: envSplit(req.Split), Comment: req.Comment})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, pr)
	return nil
}

// handleListRequests serves one page of the publication requests of the
// canvases the caller reaches, newest first, in the pagination envelope.
func (s *Server) handleListRequests(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	canvasID := q.UUID("resourceId", false)
	status := q.Enum("status", false, env.RequestStatuses...)
	limit, offset := pageBounds(q, env.DefaultLimit, env.MaxLimit)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	page, err := s.environments.ListRequests(r.Context(), env.ListRequestsParams{CanvasID: canvasID, Status: status,
		Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(page.Items, page.Total, nil, pageRequest{
		Filters: filters("resourceId", canvasID, "status", status),
		Limit:   page.Limit, Offset: page.Offset, ObjectLinks: objectLinks}))
	return nil
}

// handleGetRequest serves one publication request.
func (s *Server) handleGetRequest(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	pr, err := s.environments.GetRequest(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pr)
	return nil
}

// handleDecision applies a decision to the request of the path: 200 with
// the request as it is afterwards. The body, {comment?}, may be left out.
func (s *Server) handleDecision(decide func(*env.Service, context.Context, string, string) (*env.PublicationRequest, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "id")
		if err != nil {
			return err
		}
		var req wire.DecisionParams
		if r.ContentLength != 0 {
			if err := s.decodeJSON(r, "DecisionParams", &req); err != nil {
				return err
			}
		}
		pr, err := decide(s.environments, r.Context(), id, req.Comment)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, pr)
		return nil
	}
}
