package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// registerDeliveryRoutes mounts the webhook delivery log, redelivery and
// an application's Test Request.
func (s *Server) registerDeliveryRoutes() {
	s.route("GET /webhooks/deliveries", s.handleListDeliveries)
	s.route("GET /webhooks/deliveries/{id}", withID(s.deliveryService, "id", (*webhook.DeliveryService).GetDelivery))
	s.route("POST /webhooks/deliveries/{id}/redeliver", s.handleRedeliver)
	s.route("POST /applications/{id}/events/test", s.handleTestApplication)
}

// deliveryService returns the delivery service, or NOT_FOUND when the
// server has none.
func (s *Server) deliveryService() (*webhook.DeliveryService, error) {
	if s.deliveries == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Webhook deliveries are not configured on this server.")
	}
	return s.deliveries, nil
}

// handleListDeliveries serves one page of the delivery log in the
// pagination envelope, newest first, filtered by applicationId, status and
// eventType.
func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.deliveryService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	f := webhook.DeliveryFilter{
		ApplicationID: q.UUID("applicationId", false),
		Status:        q.String("status", false),
		EventType:     q.String("eventType", false),
		Limit:         q.Int("limit", webhook.DefaultDeliveryLimit),
		Offset:        q.Int("offset", 0),
	}
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	page, err := svc.ListDeliveries(r.Context(), f)
	if err != nil {
		return err
	}
	var lastRef *int64
	if n := len(page.Items); n > 0 {
		lastRef = &page.Items[n-1].Seq
	}
	var filters []pageParam
	for _, p := range []pageParam{{"applicationId", f.ApplicationID}, {"status", f.Status}, {"eventType", f.EventType}} {
		if p.Value != "" {
			filters = append(filters, p)
		}
	}
	writeJSON(w, http.StatusOK, newPage(page.Items, page.Total, lastRef, pageRequest{
		Filters: filters, Limit: f.Limit, Offset: f.Offset, ObjectLinks: objectLinks,
	}))
	return nil
}

// handleRedeliver queues a delivery again: 202 with the delivery, pending.
func (s *Server) handleRedeliver(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.deliveryService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	d, err := svc.Redeliver(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, d)
	return nil
}

// handleTestApplication sends a Test Request to the application's
// subscription, or to the URL and headers of the optional body, and
// answers 200 with what the receiver did.
func (s *Server) handleTestApplication(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.deliveryService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var params webhook.TestParams
	if r.ContentLength != 0 {
		if err := s.decodeJSON(r, "ApplicationTestRequest", &params); err != nil {
			return err
		}
	}
	res, err := svc.TestApplication(r.Context(), id, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
