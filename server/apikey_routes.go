package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// registerAPIKeyRoutes mounts the management of the caller's workspace's
// API keys, for admins without project restriction (a key's token is
// answered once, by the create; its hash never), and the names of actors
// for any viewer.
func (s *Server) registerAPIKeyRoutes() {
	s.route("GET /api-keys", s.handleListAPIKeys)
	s.route("POST /api-keys",
		withBody(s, s.canvasService, "CreateAPIKeyRequest", http.StatusCreated, (*canvas.Service).CreateAPIKey))
	s.route("DELETE /api-keys/{id}", deleteID(s.canvasService, (*canvas.Service).RevokeAPIKey))
	s.route("GET /actors", s.handleActors)
	s.route("GET /me", s.handleMe)
}

// handleMe answers who the caller is: its workspace, its actor id as
// records keep it (requestedBy, createdBy, approvals' by), its display
// name, role and projects, so that a client can tell its own records and
// offer what its role allows.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	p, err := canvas.Authorize(r.Context(), canvas.RoleViewer)
	if err != nil {
		return err
	}
	me := wire.Me{WorkspaceID: p.WorkspaceID, ActorID: p.Actor(), Name: p.Name, Role: string(p.Role), Projects: p.Projects}
	if p.UserID != "" {
		me.UserID = &p.UserID
	}
	if p.KeyID != "" {
		me.KeyID = &p.KeyID
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}

// handleListAPIKeys serves one page of the workspace's API keys in the
// pagination envelope, oldest first, revoked ones included.
func (s *Server) handleListAPIKeys(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	limit := q.Int("limit", defaultKeyLimit)
	offset := q.Int("offset", 0)
	objectLinks := q.Bool("objectLinks", false)
	if limit == 0 {
		limit = defaultKeyLimit
	}
	if limit < 1 || limit > maxKeyLimit {
		q.fail("limit", "must be between 1 and 100")
	}
	if offset < 0 {
		q.fail("offset", "must not be negative")
	}
	if err := q.Err(); err != nil {
		return err
	}
	keys, total, err := s.canvases.ListAPIKeys(r.Context(), limit, offset)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(keys, total, nil, pageRequest{
		Limit: limit, Offset: offset, ObjectLinks: objectLinks,
	}))
	return nil
}

// Page bounds of GET /api-keys.
const (
	defaultKeyLimit = 20
	maxKeyLimit     = 100
)

// handleActors serves GET /actors: the names to show for the actor ids
// given as repeated id parameters.
func (s *Server) handleActors(w http.ResponseWriter, r *http.Request) error {
	names, err := s.canvases.Actors(r.Context(), r.URL.Query()["id"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": names})
	return nil
}
