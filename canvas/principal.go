package canvas

import (
	"context"
	"slices"
)

// Role is what a principal may do inside its workspace. Roles are ordered:
// each one includes the ones below it.
type Role string

// Roles, weakest first.
const (
	RoleViewer Role = "viewer" // read
	RoleEditor Role = "editor" // write, publish, run
	RoleAdmin  Role = "admin"  // everything, including applications, webhooks and keys
)

var roleRank = map[Role]int{RoleViewer: 1, RoleEditor: 2, RoleAdmin: 3}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// Includes reports whether r grants at least what want grants.
func (r Role) Includes(want Role) bool { return roleRank[r] >= roleRank[want] && roleRank[want] > 0 }

// Principal is the authenticated caller of a request. It is carried in the
// request context and consulted by every service method.
type Principal struct {
	WorkspaceID string
	// UserID is the user identity of a JWT's sub claim; it is empty for API
	// keys, which carry no user identity.
	UserID string
	// KeyID identifies the API key when the caller used one.
	KeyID string
	// Name is for display only: the API key's name, or a JWT's name claim
	// (else its email claim); empty when there is none. Records keep the
	// actor (Actor), never the name, which may change.
	Name string
	Role Role
	// Projects restricts the principal to these project ids; nil means every
	// project of the workspace.
	Projects []string
}

// Actor is the identifier recorded in createdBy, updatedBy and deletedBy.
func (p *Principal) Actor() string {
	switch {
	case p.UserID != "":
		return p.UserID
	case p.KeyID != "":
		return "key:" + p.KeyID
	}
	return "system"
}

// HasUser reports whether the principal carries a user identity.
func (p *Principal) HasUser() bool { return p.UserID != "" }

// CanAccessProject reports whether the principal may reach resources of the
// given project. A nil project (personal drafts) is reachable only by the
// principal that owns it, which the caller checks separately.
func (p *Principal) CanAccessProject(projectID string) bool {
	return p.Projects == nil || slices.Contains(p.Projects, projectID)
}

// Require returns FORBIDDEN when the principal's role does not include want.
func (p *Principal) Require(want Role) error {
	if !p.Role.Includes(want) {
		return Errorf(EFORBIDDEN, "This operation requires the %s role.", want)
	}
	return nil
}

type principalKey struct{}

// NewContext returns a context carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal of ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Authorize returns the principal of ctx after checking that its role
// includes want. A context without a principal is UNAUTHORIZED.
func Authorize(ctx context.Context, want Role) (*Principal, error) {
	p := PrincipalFrom(ctx)
	if p == nil {
		return nil, Errorf(EUNAUTHORIZED, "Missing or invalid API key.")
	}
	if err := p.Require(want); err != nil {
		return nil, err
	}
	return p, nil
}

// CheckCanvas decides whether the principal may reach canvas c. A personal
// draft (no project) is visible only to the user who created it, and is
// NOT_FOUND to everyone else so that its existence is not revealed; a canvas
// of a project the principal cannot access is FORBIDDEN.
func (p *Principal) CheckCanvas(c *Canvas) error {
	if c.WorkspaceID != p.WorkspaceID {
		return NotFound("canvas")
	}
	if c.ProjectID == nil {
		if !p.HasUser() || c.CreatedBy != p.UserID {
			return NotFound("canvas")
		}
		return nil
	}
	if !p.CanAccessProject(*c.ProjectID) {
		return Errorf(EFORBIDDEN, "This token has no access to the canvas' project.")
	}
	return nil
}

// ReachableCanvas returns the live canvas id of the principal's workspace,
// with Favorited filled for a principal with a user identity, after checking
// as CheckCanvas does that the principal may reach it. Every service that
// acts on a canvas loads it through here.
func ReachableCanvas(ctx context.Context, store Store, p *Principal, id string) (*Canvas, error) {
	c, err := store.GetCanvas(ctx, GetCanvasParams{WorkspaceID: p.WorkspaceID, ID: id, UserID: p.UserID})
	if err != nil {
		return nil, err
	}
	if err := p.CheckCanvas(c); err != nil {
		return nil, err
	}
	return c, nil
}
