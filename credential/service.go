package credential

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/freshcache"
	"github.com/promptcanvas/promptcanvas/model"
)

// Projects is what the service reads of a workspace's projects: whether
// one exists.
type Projects interface {
	GetProject(ctx context.Context, workspaceID, id string) (*canvas.Project, error)
}

// Options wire a Service. Store and Projects are required.
type Options struct {
	Store    Store
	Projects Projects
	// Keys seals and opens the credentials' keys. Without it the service
	// lists and reads credentials but refuses to store or open a key.
	Keys *KeyRing
	// Changes tells when the credentials or the price overrides of a
	// workspace may have changed, so that the model caller's reads are
	// served from memory in between; nil reads the store every time.
	Changes canvas.ChangeVersioner
	// Logger receives what Used could not record; nil discards it.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now canvas.Clock
}

// Service manages a workspace's credentials and model prices.
//
// Every method of the HTTP API reads the Principal from its context:
// viewers and editors read, admins write. A credential of another
// workspace is NOT_FOUND. Project scope: a credential of every project
// (ProjectIDs nil) is visible to every principal of its workspace, and one
// limited to projects is visible to a principal limited to projects only
// when the two lists meet (otherwise FORBIDDEN, and lists leave it out). A
// principal limited to projects writes only credentials whose every
// project is one of its own, and never one of every project; price
// overrides, which hold for the whole workspace, are written by
// principals without project restriction only.
//
// The methods of model.Credentials and model.Prices (List, Open, Used,
// Price) serve the model caller, which has authorized its caller already:
// they read no Principal.
type Service struct {
	store    Store
	projects Projects
	keys     *KeyRing
	logger   *slog.Logger
	now      canvas.Clock

	infos   *freshcache.Cache[string, []model.CredentialInfo]
	records *freshcache.Cache[[2]string, *Record]
	prices  *freshcache.Cache[string, map[string]model.Price]

	usedMu sync.Mutex
	used   map[[2]string]time.Time // when lastUsedAt was last written, by workspace and id
}

// Compile-time checks that the Service serves the model caller.
var (
	_ model.Credentials = (*Service)(nil)
	_ model.Prices      = (*Service)(nil)
)

// NewService returns a Service.
func NewService(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{store: opts.Store, projects: opts.Projects, keys: opts.Keys, logger: opts.Logger, now: opts.Now,
		infos:   freshcache.New[string, []model.CredentialInfo](opts.Changes, 4096),
		records: freshcache.New[[2]string, *Record](opts.Changes, 4096),
		prices:  freshcache.New[string, map[string]model.Price](opts.Changes, 4096),
		used:    map[[2]string]time.Time{}}
}

// errNoKeys is the answer to a write that needs the key ring when the
// server has none.
func errNoKeys() error {
	return canvas.Errorf(canvas.ECONFLICT, "This server has no secrets key (--secrets-key-file or "+
		"CANVAS_SECRETS_KEY_FILE), so it cannot store or open a credential's key.")
}

// CreateParams are the fields of a new credential, named as in the body of
// POST /credentials. APIKey is required unless the provider is
// openai-compatible; ProjectIDs nil means every project; Settings is a
// JSON object or empty.
type CreateParams struct {
	Name       string          `json:"name"`
	Provider   string          `json:"provider"`
	APIKey     *string         `json:"apiKey"`
	BaseURL    *string         `json:"baseUrl"`
	ProjectIDs []string        `json:"projectIds"`
	Settings   json.RawMessage `json:"settings"`
}

// UpdateParams are a partial update, named as in the body of
// PATCH /credentials/{id}. A ...Set field tells a null (clear) from an
// absent field: a null apiKey removes the key (openai-compatible only), a
// null baseUrl the endpoint, null projectIds opens the credential to every
// project, and null settings clears them all. Settings is a JSON merge
// patch (RFC 7386) of the stored settings.
type UpdateParams struct {
	Name          *string
	APIKey        *string
	APIKeySet     bool
	BaseURL       *string
	BaseURLSet    bool
	ProjectIDs    []string
	ProjectIDsSet bool
	Settings      json.RawMessage
}

// CreateCredential stores a new credential with its key sealed, and returns it (the
// key is never returned). It requires the admin role.
func (s *Service) CreateCredential(ctx context.Context, params CreateParams) (*Credential, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var v validator
	v.name(params.Name)
	known := v.provider(params.Provider)
	switch {
	case params.APIKey != nil:
		v.apiKey(*params.APIKey)
	case known && !keyOptional(params.Provider):
		v.add("/json/apiKey", "is required for provider %s", params.Provider)
	}
	baseURL := trimmed(params.BaseURL)
	if baseURL != nil {
		v.baseURL(*baseURL)
	} else if known && needsBaseURL(params.Provider) {
		v.add("/json/baseUrl", "is required for provider %s", params.Provider)
	}
	if params.ProjectIDs != nil {
		v.projectIDs(params.ProjectIDs)
	}
	var settings model.Settings
	if known {
		settings = v.settings(params.Provider, params.Settings)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.checkProjects(ctx, p, params.ProjectIDs); err != nil {
		return nil, err
	}
	if !writable(p, params.ProjectIDs) {
		return nil, canvas.ErrOutsideProjects()
	}
	r := &Record{Credential: Credential{ID: uuid.NewString(), WorkspaceID: p.WorkspaceID,
		Name: strings.TrimSpace(params.Name), Provider: params.Provider, BaseURL: baseURL,
		ProjectIDs: params.ProjectIDs, Settings: settings, CreatedBy: p.Actor()}, UpdatedBy: p.Actor()}
	if params.APIKey != nil {
		if s.keys == nil {
			return nil, errNoKeys()
		}
		sealed, err := s.keys.Seal(r.WorkspaceID, r.ID, []byte(*params.APIKey))
		if err != nil {
			return nil, err
		}
		h := hint(*params.APIKey)
		r.Sealed, r.KeyHint = &sealed, &h
	}
	if err := s.store.CreateCredential(ctx, r); err != nil {
		return nil, err
	}
	return &r.Credential, nil
}

// checkProjects returns NOT_FOUND unless every id is a project of the
// principal's workspace, as a canvas's project is checked.
func (s *Service) checkProjects(ctx context.Context, p *canvas.Principal, ids []string) error {
	for _, id := range ids {
		if _, err := s.projects.GetProject(ctx, p.WorkspaceID, id); err != nil {
			return err
		}
	}
	return nil
}

// visible reports whether a principal sees a credential of projects.
func visible(p *canvas.Principal, projects []string) bool {
	if !p.Restricted() || projects == nil {
		return true
	}
	for _, id := range projects {
		if p.CanAccessProject(id) {
			return true
		}
	}
	return false
}

// writable reports whether a principal may write a credential of projects:
// one without project restriction any, one limited to projects only a
// credential of its own projects.
func writable(p *canvas.Principal, projects []string) bool {
	if !p.Restricted() {
		return true
	}
	if projects == nil {
		return false
	}
	for _, id := range projects {
		if !p.CanAccessProject(id) {
			return false
		}
	}
	return true
}

// GetCredential returns a credential of the principal's workspace. It requires the
// viewer role.
func (s *Service) GetCredential(ctx context.Context, id string) (*Credential, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	r, err := s.get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return &r.Credential, nil
}

// get returns a live credential of the principal's workspace that it sees.
func (s *Service) get(ctx context.Context, p *canvas.Principal, id string) (*Record, error) {
	if uuid.Validate(id) != nil {
		return nil, canvas.NotFound("credential")
	}
	r, err := s.store.GetCredential(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if !visible(p, r.ProjectIDs) {
		return nil, canvas.ErrOutsideProjects()
	}
	return r, nil
}

// ListQuery selects credentials for ListCredentials: Provider keeps one
// provider's, ProjectID those that project may use.
type ListQuery struct {
	Provider  string
	ProjectID string
	Limit     int
	Offset    int
}

// ListCredentials returns one page of the credentials of the principal's workspace
// that it sees, oldest first, and how many there are in all. It requires
// the viewer role; a project the principal cannot access is FORBIDDEN.
func (s *Service) ListCredentials(ctx context.Context, q ListQuery) ([]*Credential, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if q.ProjectID != "" && !p.CanAccessProject(q.ProjectID) {
		return nil, 0, canvas.Errorf(canvas.EFORBIDDEN, "This token has no access to the project.")
	}
	lp := ListParams{WorkspaceID: p.WorkspaceID, Provider: q.Provider, ProjectID: q.ProjectID,
		Limit: q.Limit, Offset: q.Offset}
	if p.Restricted() {
		lp.Visible = append([]string{}, p.Projects...)
	}
	recs, total, err := s.store.ListCredentials(ctx, lp)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Credential, len(recs))
	for i, r := range recs {
		out[i] = &r.Credential
	}
	return out, total, nil
}

// UpdateCredential applies a partial update: a new name, a new key (rotating it),
// endpoint, projects or settings. It requires the admin role; the
// credential must be writable by the principal before and after.
func (s *Service) UpdateCredential(ctx context.Context, id string, params UpdateParams) (*Credential, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	cur, err := s.get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if !writable(p, cur.ProjectIDs) {
		return nil, canvas.ErrOutsideProjects()
	}
	var v validator
	upd := Update{UpdatedBy: p.Actor()}
	if params.Name != nil {
		v.name(*params.Name)
		name := strings.TrimSpace(*params.Name)
		upd.Name = &name
	}
	switch {
	case params.APIKeySet && params.APIKey != nil:
		v.apiKey(*params.APIKey)
	case params.APIKeySet && !keyOptional(cur.Provider):
		v.add("/json/apiKey", "cannot be removed: provider %s needs a key", cur.Provider)
	case params.APIKeySet:
		upd.ClearKey = true
	}
	baseURL := cur.BaseURL
	if params.BaseURLSet {
		baseURL = trimmed(params.BaseURL)
		if baseURL != nil {
			v.baseURL(*baseURL)
		}
		upd.BaseURL = &baseURL
	}
	if baseURL == nil && needsBaseURL(cur.Provider) {
		v.add("/json/baseUrl", "is required for provider %s", cur.Provider)
	}
	projects := cur.ProjectIDs
	if params.ProjectIDsSet {
		projects = params.ProjectIDs
		if projects != nil {
			v.projectIDs(projects)
		}
		upd.ProjectIDs = &projects
	}
	if params.Settings != nil {
		stored, err := json.Marshal(cur.Settings)
		if err != nil {
			return nil, err
		}
		merged, err := canvas.MergePatch(stored, params.Settings)
		if err != nil {
			v.add("/json/settings", "must be an object or null")
		} else {
			settings := v.settings(cur.Provider, merged)
			upd.Settings = &settings
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if params.ProjectIDsSet {
		if err := s.checkProjects(ctx, p, projects); err != nil {
			return nil, err
		}
		if !writable(p, projects) {
			return nil, canvas.ErrOutsideProjects()
		}
	}
	if params.APIKeySet && params.APIKey != nil {
		if s.keys == nil {
			return nil, errNoKeys()
		}
		sealed, err := s.keys.Seal(cur.WorkspaceID, cur.ID, []byte(*params.APIKey))
		if err != nil {
			return nil, err
		}
		h := hint(*params.APIKey)
		upd.Sealed, upd.KeyHint = &sealed, &h
	}
	r, err := s.store.UpdateCredential(ctx, p.WorkspaceID, id, upd)
	if err != nil {
		return nil, err
	}
	return &r.Credential, nil
}

// DeleteCredential deletes a credential: it is no longer listed, read or used, and
// its sealed key is forgotten. It requires the admin role.
func (s *Service) DeleteCredential(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return err
	}
	cur, err := s.get(ctx, p, id)
	if err != nil {
		return err
	}
	if !writable(p, cur.ProjectIDs) {
		return canvas.ErrOutsideProjects()
	}
	return s.store.DeleteCredential(ctx, p.WorkspaceID, id, p.Actor())
}

// trimmed returns s without surrounding spaces, or nil for nil or blank.
func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	if t == "" {
		return nil
	}
	return &t
}
