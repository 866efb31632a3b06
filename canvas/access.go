package canvas

import "context"

// Restricted reports whether the principal is limited to some projects of
// its workspace (Projects is not nil).
func (p *Principal) Restricted() bool { return p.Projects != nil }

// Scope is the part of a principal that decides which canvases it reaches,
// in a form a store can filter a list with: the live canvases of
// WorkspaceID, of one of Projects when Projects is not nil, and the
// personal drafts of UserID. It lets a store page through resources of
// reachable canvases without reading every canvas first.
type Scope struct {
	WorkspaceID string
	// Projects restricts the canvases to these projects; nil means every
	// project of the workspace.
	Projects []string
	// UserID is the user whose personal drafts are reachable; empty
	// reaches none.
	UserID string
}

// Scope returns the canvases the principal reaches, as CheckCanvas decides.
func (p *Principal) Scope() Scope {
	return Scope{WorkspaceID: p.WorkspaceID, Projects: p.Projects, UserID: p.UserID}
}

// ErrOutsideProjects is the FORBIDDEN answer to a project-restricted
// principal about a resource that belongs to no canvas of its projects.
func ErrOutsideProjects() error {
	return Errorf(EFORBIDDEN, "This token is limited to some projects and has no access to this resource.")
}

// ReachableResource decides whether the principal may reach a resource of
// its workspace that may belong to a canvas: an application, a webhook
// delivery, a run. canvasID is the resource's canvas, or empty when it
// belongs to none; createdBy is the actor that created it, or empty when
// unknown.
//
// A principal without project restriction reaches every such resource of
// its workspace. A project-restricted principal reaches a resource of a
// canvas it reaches (ReachableCanvas: FORBIDDEN for a canvas of another
// project, NOT_FOUND for a deleted canvas or someone else's draft), and a
// resource without a canvas only when it created it itself; any other is
// FORBIDDEN, since such a resource is not inside any of its projects.
func ReachableResource(ctx context.Context, store Store, p *Principal, canvasID, createdBy string) error {
	if !p.Restricted() {
		return nil
	}
	if canvasID == "" {
		if createdBy != "" && createdBy == p.Actor() {
			return nil
		}
		return ErrOutsideProjects()
	}
	_, err := ReachableCanvas(ctx, store, p, canvasID)
	return err
}
