package canvas

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Service is the canvas, version and message service, the in-process API
// that the server and embedders call. Every method reads the Principal from
// its context and authorizes it: viewer reads, editor writes canvases,
// versions and messages, admin creates projects. Inputs are validated before
// the Store is touched, and a VALIDATION error lists every problem with a
// JSON pointer into the request body ("/json/title").
//
// Access follows Principal.CheckCanvas: a canvas of a project the principal
// cannot reach is FORBIDDEN; another user's personal draft, or anything of
// another workspace, is NOT_FOUND. Versions and messages inherit the access
// of their canvas.
type Service struct {
	store     Store
	workflows WorkflowCompiler
	promoter  Promoter
	// credentials checks allowedCredentials; nil keeps any UUIDs.
	credentials CredentialChecker
	// includes checks the includes of saved messages; nil keeps them
	// unchecked.
	includes IncludeChecker
}

// Options wire a Service. Store is required.
type Options struct {
	Store Store
	// Workflows compiles the workflow specification of a new version and
	// returns the graph stored with it; without it, a version with a spec
	// is refused (VALIDATION).
	Workflows WorkflowCompiler
	// Promoter publishes a version to production when an update promotes
	// it, as every publish goes (env.Service), so that a promotion is a
	// publication like any other and notifies what publications notify;
	// without it, a promotion is refused (VALIDATION).
	Promoter Promoter
	// Credentials checks that a canvas's allowedCredentials are
	// credentials of its workspace; without it, any UUIDs are kept.
	Credentials CredentialChecker
	// Includes checks the includes ({{> CANVAS_ID}}) of every message a
	// version is saved with: a missing canvas or environment, a canvas the
	// caller cannot read, a cycle or nesting past MaxIncludeDepth is
	// VALIDATION; without it, includes are checked only when they run.
	Includes IncludeChecker
}

// CredentialChecker tells which ids are not credentials of a workspace.
type CredentialChecker interface {
	// Unknown returns the ids among ids that are not live credentials of
	// workspaceID, in their order.
	Unknown(ctx context.Context, workspaceID string, ids []string) ([]string, error)
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	return &Service{store: opts.Store, workflows: opts.Workflows, promoter: opts.Promoter, credentials: opts.Credentials,
		includes: opts.Includes}
}

// checkCredentials returns VALIDATION naming each id of ids (a canvas's
// allowedCredentials, at path) that is not a credential of the workspace.
func (s *Service) checkCredentials(ctx context.Context, workspaceID, path string, ids []string) error {
	if s.credentials == nil || len(ids) == 0 {
		return nil
	}
	unknown, err := s.credentials.Unknown(ctx, workspaceID, ids)
	if err != nil || len(unknown) == 0 {
		return err
	}
	var v validator
	for i, id := range ids {
		if slices.Contains(unknown, id) {
			v.add(fmt.Sprintf("%s/%d", path, i), "is not a credential of the workspace")
		}
	}
	return v.err()
}

// checkIncludes checks the includes of messages about to be saved in a
// version of canvasID (see Options.Includes).
func (s *Service) checkIncludes(ctx context.Context, canvasID string, messages []MessageContent) error {
	if s.includes == nil {
		return nil
	}
	if !slices.ContainsFunc(messages, func(m MessageContent) bool { return HasIncludes(m.Content) }) {
		return nil
	}
	return s.includes.CheckIncludes(ctx, canvasID, messages)
}

// CreateProjectParams are the fields of a new project. The JSON names are
// those of the request body of POST /projects.
type CreateProjectParams struct {
	// Name is required: at most 256 characters, trimmed.
	Name string `json:"name"`
}

// CreateProject creates a project in the principal's workspace. It requires
// the admin role.
func (s *Service) CreateProject(ctx context.Context, params CreateProjectParams) (*Project, error) {
	p, err := Authorize(ctx, RoleAdmin)
	if err != nil {
		return nil, err
	}
	var v validator
	name := strings.TrimSpace(params.Name)
	v.requiredTitle("/json/name", name)
	if err := v.err(); err != nil {
		return nil, err
	}
	proj := &Project{Name: name, WorkspaceID: p.WorkspaceID}
	if err := s.store.CreateProject(ctx, proj); err != nil {
		return nil, err
	}
	return proj, nil
}

// ListProjects returns the projects of the principal's workspace that the
// principal can access, as the store orders them.
func (s *Service) ListProjects(ctx context.Context) ([]*Project, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	all, err := s.store.ListProjects(ctx, p.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]*Project, 0, len(all))
	for _, proj := range all {
		if p.CanAccessProject(proj.ID) {
			out = append(out, proj)
		}
	}
	return out, nil
}

// canvas returns a live canvas the principal may reach.
func (s *Service) canvas(ctx context.Context, p *Principal, id string) (*Canvas, error) {
	return ReachableCanvas(ctx, s.store, p, id)
}

// version returns a live version whose canvas the principal may reach.
func (s *Service) version(ctx context.Context, p *Principal, id string) (*Version, error) {
	v, err := s.store.GetVersion(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, v.PromptID); err != nil {
		return nil, err
	}
	return v, nil
}

// project checks that a project exists in the principal's workspace (else
// NOT_FOUND) and that the principal may reach it (else FORBIDDEN).
func (s *Service) project(ctx context.Context, p *Principal, id string) error {
	if _, err := s.store.GetProject(ctx, p.WorkspaceID, id); err != nil {
		return err
	}
	if !p.CanAccessProject(id) {
		return Errorf(EFORBIDDEN, "This token has no access to the project.")
	}
	return nil
}
