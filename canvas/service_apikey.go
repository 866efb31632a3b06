package canvas

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CreateAPIKeyParams are the fields of a new API key. The JSON names are
// those of the request body of POST /api-keys.
type CreateAPIKeyParams struct {
	// Role is required: viewer, editor or admin.
	Role Role `json:"role"`
	// Projects restricts the key to these projects of the workspace; nil
	// (absent) means every project. An empty list is VALIDATION: a key
	// that reaches no project is of no use.
	Projects []string `json:"projects"`
	// Name is optional: a name that tells the key apart for people, at
	// most MaxKeyNameLength characters once trimmed, not blank when given.
	Name *string `json:"name"`
}

// MaxKeyNameLength bounds an API key's name, in characters.
const MaxKeyNameLength = 100

// KeyName trims an API key's name and says what is wrong with it, if
// anything: blank, longer than MaxKeyNameLength characters, or holding
// control characters. The API and canvasd keys create check names with it.
func KeyName(s string) (name, problem string) {
	name = strings.TrimSpace(s)
	switch {
	case name == "":
		return name, "must not be blank"
	case utf8.RuneCountInString(name) > MaxKeyNameLength:
		return name, fmt.Sprintf("must be at most %d characters", MaxKeyNameLength)
	case strings.ContainsFunc(name, unicode.IsControl):
		return name, "must not hold control characters"
	}
	return name, ""
}

// CreatedAPIKey is a new API key with its token, which is shown now or
// never: only its hash is stored.
type CreatedAPIKey struct {
	APIKey
	Token string `json:"token"`
}

// manageKeys authorizes a principal to manage the API keys of its
// workspace: the admin role, without project restriction, since a key
// made by a restricted principal could reach more than the principal does.
func manageKeys(ctx context.Context) (*Principal, error) {
	p, err := Authorize(ctx, RoleAdmin)
	if err != nil {
		return nil, err
	}
	if p.Restricted() {
		return nil, Errorf(EFORBIDDEN, "This token is limited to some projects and cannot manage API keys.")
	}
	return p, nil
}

// CreateAPIKey creates an API key in the principal's workspace and returns
// it with its token. It requires the admin role without project
// restriction. A role that is not viewer, editor or admin, a blank or
// too long name, a project that is not a UUID or an empty project list is
// VALIDATION; a project that is
// not in the workspace is NOT_FOUND.
func (s *Service) CreateAPIKey(ctx context.Context, params CreateAPIKeyParams) (*CreatedAPIKey, error) {
	p, err := manageKeys(ctx)
	if err != nil {
		return nil, err
	}
	var v validator
	if !params.Role.Valid() {
		v.add("/json/role", "must be viewer, editor or admin")
	}
	var name string
	if params.Name != nil {
		var problem string
		if name, problem = KeyName(*params.Name); problem != "" {
			v.add("/json/name", "%s", problem)
		}
	}
	if params.Projects != nil && len(params.Projects) == 0 {
		v.add("/json/projects", "must name at least one project, or be left out for every project")
	}
	var projects []string
	for i, id := range params.Projects {
		if v.uuid("/json/projects/"+strconv.Itoa(i), id) && !slices.Contains(projects, id) {
			projects = append(projects, id)
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	for _, id := range projects {
		if _, err := s.store.GetProject(ctx, p.WorkspaceID, id); err != nil {
			return nil, err
		}
	}
	token, key := NewAPIKey(p.WorkspaceID, params.Role, projects)
	key.Name = name
	if err := s.store.CreateAPIKey(ctx, key); err != nil {
		return nil, err
	}
	return &CreatedAPIKey{APIKey: *key, Token: token}, nil
}

// ListAPIKeys returns one page of the API keys of the principal's
// workspace (limit keys from offset on), revoked ones included, oldest
// first, without their tokens, and how many the workspace holds in all. It
// requires the admin role without project restriction.
func (s *Service) ListAPIKeys(ctx context.Context, limit, offset int) ([]*APIKey, int, error) {
	p, err := manageKeys(ctx)
	if err != nil {
		return nil, 0, err
	}
	keys, total, err := s.store.PageAPIKeys(ctx, p.WorkspaceID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	if keys == nil {
		keys = []*APIKey{}
	}
	return keys, total, nil
}

// RevokeAPIKey revokes an API key of the principal's workspace: every
// request made with it from then on is refused. Revoking a revoked key is a
// no-op. It requires the admin role without project restriction; a key of
// another workspace is NOT_FOUND, and the key making the request is
// CONFLICT, so that no one locks themselves out by mistake.
func (s *Service) RevokeAPIKey(ctx context.Context, id string) error {
	p, err := manageKeys(ctx)
	if err != nil {
		return err
	}
	if _, err := s.store.GetAPIKey(ctx, p.WorkspaceID, id); err != nil {
		return err
	}
	if id == p.KeyID {
		return Errorf(ECONFLICT, "This is the key of the request; revoke it with another admin key.")
	}
	return s.store.RevokeAPIKey(ctx, id)
}
