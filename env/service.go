package env

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// History page bounds: a page holds DefaultLimit publications unless the
// caller asks otherwise, and never fewer than 1 or more than MaxLimit.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Service publishes versions to environments, manages custom environments
// and reads their history. Every method authorizes the principal of the
// context: viewers read, editors publish and create or delete environments.
// The canvas is loaded and checked first, so a canvas of a project the
// principal cannot access is FORBIDDEN, and a canvas of another workspace or
// someone else's personal draft is NOT_FOUND.
type Service struct {
	store    Store
	canvases canvas.Store
}

// NewService returns a Service over the stores.
func NewService(store Store, canvases canvas.Store) *Service {
	return &Service{store: store, canvases: canvases}
}

// CreateEnvironmentParams names a new custom environment of a canvas.
type CreateEnvironmentParams struct {
	CanvasID string
	// Name is trimmed and must follow the custom name rules.
	Name string
}

// PublishVersionParams says which version to publish to which environment.
type PublishVersionParams struct {
	CanvasID string
	// EnvName is production or an existing custom environment's name.
	EnvName   string
	VersionID string
}

// HistoryParams selects one page of an environment's publication history.
type HistoryParams struct {
	CanvasID string
	// EnvName is production (created on demand) or an existing custom
	// environment's name.
	EnvName string
	// Limit is clamped to 1..MaxLimit; callers pass DefaultLimit when the
	// user gave none.
	Limit int
	// Offset below 0 is read as 0, the same way Limit is clamped.
	Offset int
}

// ActiveVersionParams selects an environment whose served version is read.
type ActiveVersionParams struct {
	CanvasID string
	EnvName  string
}

// Page is one page of an environment's publication history, newest first.
// Limit and Offset are the values actually used, after clamping.
type Page struct {
	Environment *Environment
	Items       []*Publication
	Total       int
	Limit       int
	Offset      int
}

// CreateEnvironment creates a custom environment. The name must pass
// CheckCustomName (INVALID_ENVIRONMENT_NAME otherwise); a name the canvas
// already uses is CONFLICT. It requires the editor role.
func (s *Service) CreateEnvironment(ctx context.Context, params CreateEnvironmentParams) (*Environment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	name, err := CheckCustomName(params.Name)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e := &Environment{
		Name:         name,
		ResourceType: ResourcePrompt,
		ResourceID:   c.ID,
		WorkspaceID:  c.WorkspaceID,
		CreatedBy:    p.Actor(),
	}
	if err := s.store.CreateEnvironment(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// ListEnvironments returns the environments of a canvas, production first,
// each with the id of the version it serves. Production is created on
// demand, so the list always holds it.
func (s *Service) ListEnvironments(ctx context.Context, canvasID string) ([]*Environment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, canvasID)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.FindEnvironment(ctx, c.WorkspaceID, c.ID, Production); err != nil {
		return nil, err
	}
	return s.store.ListEnvironments(ctx, c.WorkspaceID, c.ID)
}

// DeleteEnvironment deletes a custom environment and its history. The
// production environment cannot be deleted (CONFLICT). It requires the
// editor role.
func (s *Service) DeleteEnvironment(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return err
	}
	e, err := s.store.GetEnvironment(ctx, p.WorkspaceID, id)
	if err != nil {
		return err
	}
	if _, err := s.canvas(ctx, p, e.ResourceID); err != nil {
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return canvas.NotFound("environment")
		}
		return err
	}
	if e.IsSystem {
		return canvas.Errorf(canvas.ECONFLICT, "The %s environment cannot be deleted.", e.Name)
	}
	return s.store.DeleteEnvironment(ctx, p.WorkspaceID, id)
}

// Publish makes a version of the canvas the active publication of the named
// environment, and returns that publication. created is false when the
// version was already active, in which case nothing changes. Publishing to
// production makes the version the canvas' promoted version. It requires the
// editor role.
func (s *Service) Publish(ctx context.Context, params PublishVersionParams) (pub *Publication, created bool, err error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, false, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, false, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, false, err
	}
	return s.store.Publish(ctx, PublishParams{
		WorkspaceID: c.WorkspaceID,
		CanvasID:    c.ID,
		EnvName:     name,
		VersionID:   params.VersionID,
		By:          p.Actor(),
	})
}

// History returns one page of an environment's publication history, newest
// first. Production is created on demand, so a fresh canvas has an empty
// production history; any other environment must exist (NOT_FOUND).
func (s *Service) History(ctx context.Context, params HistoryParams) (*Page, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e, err := s.store.FindEnvironment(ctx, c.WorkspaceID, c.ID, name)
	if err != nil {
		return nil, err
	}
	limit, offset := ClampLimit(params.Limit), max(params.Offset, 0)
	items, total, err := s.store.ListPublications(ctx, c.WorkspaceID, e.ID, limit, offset)
	if err != nil {
		return nil, err
	}
	return &Page{Environment: e, Items: items, Total: total, Limit: limit, Offset: offset}, nil
}

// ActiveVersion returns the version the named environment serves, in full:
// messages, variables, configuration, its position in the canvas history and
// its workspace. It is NOT_FOUND when the environment does not exist or has
// nothing published.
func (s *Service) ActiveVersion(ctx context.Context, params ActiveVersionParams) (*canvas.Version, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e, err := s.store.FindEnvironment(ctx, c.WorkspaceID, c.ID, name)
	if err != nil {
		return nil, err
	}
	if e.ActiveVersionID == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Nothing is published to the %s environment.", e.Name)
	}
	v, err := s.canvases.GetVersion(ctx, c.WorkspaceID, *e.ActiveVersionID)
	if err != nil {
		return nil, err
	}
	v.WorkspaceID = c.WorkspaceID
	return v, nil
}

// ClampLimit bounds a history page size to 1..MaxLimit.
func ClampLimit(limit int) int {
	return min(max(limit, 1), MaxLimit)
}

// canvas loads a live canvas and checks that the principal may reach it.
func (s *Service) canvas(ctx context.Context, p *canvas.Principal, id string) (*canvas.Canvas, error) {
	c, err := s.canvases.GetCanvas(ctx, p.WorkspaceID, id, p.UserID)
	if err != nil {
		return nil, err
	}
	if err := p.CheckCanvas(c); err != nil {
		return nil, err
	}
	return c, nil
}
