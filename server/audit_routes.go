package server

import (
	"net/http"
	"time"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
)

// registerAuditRoutes mounts the audit log: admins read their workspace's
// events.
func (s *Server) registerAuditRoutes() {
	s.route("GET /audit-events", s.handleListAuditEvents)
}

// handleListAuditEvents serves one page of the workspace's audit events
// that the filters select, newest first, in the pagination envelope.
func (s *Server) handleListAuditEvents(w http.ResponseWriter, r *http.Request) error {
	if s.audit == nil {
		return canvas.Errorf(canvas.ENOTFOUND, "The audit log is not configured on this server.")
	}
	q := newQuery(r)
	f := audit.Filter{
		ResourceType: q.String("resourceType", false),
		ResourceID:   q.String("resourceId", false),
		Actor:        q.String("actor", false),
		Action:       q.String("action", false),
	}
	since, until := q.Time("since"), q.Time("until")
	f.Limit, f.Offset = pageBounds(q, audit.DefaultLimit, audit.MaxLimit)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	if !since.IsZero() {
		f.Since = &since
	}
	if !until.IsZero() {
		f.Until = &until
	}
	page, err := s.audit.List(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(page.Items, page.Total, nil, pageRequest{
		Filters: filters("resourceType", f.ResourceType, "resourceId", f.ResourceID, "actor", f.Actor,
			"action", f.Action, "since", timeParam(f.Since), "until", timeParam(f.Until)),
		Limit: page.Limit, Offset: page.Offset, ObjectLinks: objectLinks}))
	return nil
}

// timeParam is a time filter as links repeat it ("" for none).
func timeParam(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
