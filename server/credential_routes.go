package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
)

// registerCredentialRoutes mounts the credentials and model prices of the
// caller's workspace: admins write, viewers read. A credential's key is
// accepted by create and update and answered by neither.
func (s *Server) registerCredentialRoutes() {
	s.route("POST /credentials",
		withBody(s, s.credentialService, "CreateCredentialRequest", http.StatusCreated, (*credential.Service).CreateCredential))
	s.route("GET /credentials", s.handleListCredentials)
	s.route("GET /credentials/{id}", withID(s.credentialService, "id", (*credential.Service).GetCredential))
	s.route("PATCH /credentials/{id}", s.handleUpdateCredential)
	s.route("DELETE /credentials/{id}", deleteID(s.credentialService, (*credential.Service).DeleteCredential))
	s.route("GET /models", s.handleListModels)
	// A model name may hold slashes ("meta-llama/Llama-3.1-8B"), sent as
	// they are or escaped (%2F); the wildcard takes the rest of the path.
	s.route("PUT /models/{name...}", s.handleSetModelPrice)
	s.route("DELETE /models/{name...}", s.handleDeleteModelPrice)
}

// credentialService returns the credential service, or NOT_FOUND when the
// server was built without one.
func (s *Server) credentialService() (*credential.Service, error) {
	if s.credentials == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Credentials are not configured on this server.")
	}
	return s.credentials, nil
}

// updateCredentialBody is the body of PATCH /credentials/{id}: absent
// fields are kept, null ones cleared.
type updateCredentialBody struct {
	Name       *string            `json:"name"`
	APIKey     nullable[string]   `json:"apiKey"`
	BaseURL    nullable[string]   `json:"baseUrl"`
	ProjectIDs nullable[[]string] `json:"projectIds"`
	Settings   json.RawMessage    `json:"settings"`
}

func (s *Server) handleUpdateCredential(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.credentialService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body updateCredentialBody
	if err := s.decodeJSON(r, "UpdateCredentialRequest", &body); err != nil {
		return err
	}
	params := credential.UpdateParams{Name: body.Name, Settings: body.Settings,
		APIKeySet: body.APIKey.Set, BaseURLSet: body.BaseURL.Set, ProjectIDsSet: body.ProjectIDs.Set}
	if body.APIKey.Set {
		params.APIKey = body.APIKey.Ptr()
	}
	if body.BaseURL.Set {
		params.BaseURL = body.BaseURL.Ptr()
	}
	if body.ProjectIDs.Set && !body.ProjectIDs.Null {
		params.ProjectIDs = body.ProjectIDs.Value
		if params.ProjectIDs == nil {
			params.ProjectIDs = []string{}
		}
	}
	c, err := svc.UpdateCredential(r.Context(), id, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// Page bounds of GET /credentials and GET /models.
const (
	defaultCredentialLimit = 20
	defaultModelLimit      = 100
	maxCredentialLimit     = 100
	maxModelLimit          = 100
)

// pageBounds reads limit and offset (0 < limit <= max) into q.
func pageBounds(q *query, def, most int) (limit, offset int) {
	limit = q.Int("limit", def)
	offset = q.Int("offset", 0)
	if limit < 1 || limit > most {
		q.fail("limit", "must be between 1 and "+strconv.Itoa(most))
	}
	if offset < 0 {
		q.fail("offset", "must not be negative")
	}
	return limit, offset
}

// handleListCredentials serves one page of the workspace's credentials
// the caller sees, oldest first, in the pagination envelope.
func (s *Server) handleListCredentials(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.credentialService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	limit, offset := pageBounds(q, defaultCredentialLimit, maxCredentialLimit)
	provider := q.Enum("provider", false, canvas.Providers...)
	projectID := q.UUID("projectId", false)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	list, total, err := svc.ListCredentials(r.Context(), credential.ListQuery{Provider: provider, ProjectID: projectID,
		Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(list, total, nil, pageRequest{Filters: filters("provider", provider,
		"projectId", projectID), Limit: limit, Offset: offset, ObjectLinks: objectLinks}))
	return nil
}

// handleListModels serves one page of the workspace's model prices, by
// name, in the pagination envelope.
func (s *Server) handleListModels(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.credentialService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	limit, offset := pageBounds(q, defaultModelLimit, maxModelLimit)
	provider := q.Enum("provider", false, append(append([]string{}, canvas.Providers...), credential.PriceProviderEcho)...)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	list, total, err := svc.ListModels(r.Context(), credential.ModelsQuery{Provider: provider, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(list, total, nil, pageRequest{Filters: filters("provider", provider),
		Limit: limit, Offset: offset, ObjectLinks: objectLinks}))
	return nil
}

func (s *Server) handleSetModelPrice(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.credentialService()
	if err != nil {
		return err
	}
	var body credential.SetPriceParams
	if err := s.decodeJSON(r, "SetModelPriceRequest", &body); err != nil {
		return err
	}
	p, err := svc.SetModelPrice(r.Context(), r.PathValue("name"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) handleDeleteModelPrice(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.credentialService()
	if err != nil {
		return err
	}
	if err := svc.DeleteModelPrice(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// filters returns the non-empty filters of a list, given as name, value
// pairs, in order.
func filters(pairs ...string) []pageParam {
	var out []pageParam
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, pageParam{Name: pairs[i], Value: pairs[i+1]})
		}
	}
	return out
}
