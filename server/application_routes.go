package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// registerApplicationRoutes mounts the application and subscription
// endpoints: admins write, viewers read.
func (s *Server) registerApplicationRoutes() {
	s.route("POST /applications", s.handleCreateApplication)
	s.route("GET /applications", s.handleListApplications)
	s.route("GET /applications/{id}", withID(s.applicationService, "id", (*webhook.ApplicationService).GetApplication))
	s.route("PATCH /applications/{id}", s.handleUpdateApplication)
	s.route("DELETE /applications/{id}", deleteID(s.applicationService, (*webhook.ApplicationService).DeleteApplication))
	s.route("POST /applications/{id}/events/rotate-secret",
		withID(s.applicationService, "id", (*webhook.ApplicationService).RotateSecret))
}

// applicationService returns the application service, or NOT_FOUND when
// the server was built without one.
func (s *Server) applicationService() (*webhook.ApplicationService, error) {
	if s.applications == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Applications are not configured on this server.")
	}
	return s.applications, nil
}

// headerTable is the headers field of a subscription: an array of
// {name, value} in sending order, or an object {name: value} whose keys
// are sent in the order written.
type headerTable []webhook.Header

// UnmarshalJSON accepts both shapes.
func (h *headerTable) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []webhook.Header
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*h = list
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("headers must be an array or an object")
	}
	list := []webhook.Header{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return err
		}
		list = append(list, webhook.Header{Name: k.(string), Value: v})
	}
	*h = list
	return nil
}

// subscriptionBody is the events field of an application request.
type subscriptionBody struct {
	Enabled    *bool        `json:"enabled"`
	URL        *string      `json:"url"`
	Headers    *headerTable `json:"headers"`
	EventTypes *[]string    `json:"eventTypes"`
}

func (b *subscriptionBody) params() *webhook.SubscriptionParams {
	if b == nil {
		return nil
	}
	p := &webhook.SubscriptionParams{Enabled: b.Enabled, URL: b.URL, EventTypes: b.EventTypes}
	if b.Headers != nil {
		hs := []webhook.Header(*b.Headers)
		p.Headers = &hs
	}
	return p
}

type createApplicationBody struct {
	Name            string            `json:"name"`
	PromptID        *string           `json:"promptId"`
	EnvironmentName *string           `json:"environmentName"`
	Events          *subscriptionBody `json:"events"`
}

type updateApplicationBody struct {
	Name            *string           `json:"name"`
	PromptID        nullable[string]  `json:"promptId"`
	EnvironmentName *string           `json:"environmentName"`
	Events          *subscriptionBody `json:"events"`
}

func (s *Server) handleCreateApplication(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.applicationService()
	if err != nil {
		return err
	}
	var body createApplicationBody
	if err := s.decodeJSON(r, "CreateApplicationRequest", &body); err != nil {
		return err
	}
	app, err := svc.CreateApplication(r.Context(), webhook.CreateApplicationParams{
		Name: body.Name, PromptID: body.PromptID, EnvironmentName: body.EnvironmentName, Events: body.Events.params(),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, app)
	return nil
}

func (s *Server) handleListApplications(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.applicationService()
	if err != nil {
		return err
	}
	list, err := svc.ListApplications(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) handleUpdateApplication(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.applicationService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body updateApplicationBody
	if err := s.decodeJSON(r, "UpdateApplicationRequest", &body); err != nil {
		return err
	}
	params := webhook.UpdateApplicationParams{Name: body.Name, EnvironmentName: body.EnvironmentName,
		Events: body.Events.params(), PromptIDSet: body.PromptID.Set}
	if body.PromptID.Set {
		params.PromptID = body.PromptID.Ptr()
	}
	app, err := svc.UpdateApplication(r.Context(), id, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app)
	return nil
}
