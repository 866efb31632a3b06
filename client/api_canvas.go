package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Projects.

// CreateProject creates a project of the workspace.
func (c *Client) CreateProject(ctx context.Context, name string, opts ...CallOption) (*wire.Project, error) {
	var p wire.Project
	return &p, c.write(ctx, http.MethodPost, "/projects", wire.CreateProjectRequest{Name: name}, &p, opts)
}

// ListProjects lists the projects of the workspace.
func (c *Client) ListProjects(ctx context.Context) ([]*wire.Project, error) {
	var out []*wire.Project
	return out, c.get(ctx, "/projects", nil, &out)
}

// Canvases.

// CreateCanvas creates a canvas.
func (c *Client) CreateCanvas(ctx context.Context, params wire.CreateCanvasParams, opts ...CallOption) (*wire.Canvas, error) {
	var out wire.Canvas
	return &out, c.write(ctx, http.MethodPost, "/prompt", params, &out, opts)
}

// GetCanvas reads a canvas.
func (c *Client) GetCanvas(ctx context.Context, id string) (*wire.Canvas, error) {
	var out wire.Canvas
	return &out, c.get(ctx, "/prompt/"+esc(id), nil, &out)
}

// ListCanvasesParams filter ListCanvases; empty fields do not filter.
type ListCanvasesParams struct {
	// ProjectID restricts the list to one project.
	ProjectID string
	// WorkspaceID names the workspace of a caller that reaches several.
	WorkspaceID string
	// IncludePromotedVersion fills PromotedVersion and LatestVersion.
	IncludePromotedVersion bool
	// DraftsOnly lists only the caller's personal drafts.
	DraftsOnly bool
}

// ListCanvases lists the canvases the caller can reach.
func (c *Client) ListCanvases(ctx context.Context, params ListCanvasesParams) ([]*wire.Canvas, error) {
	q := url.Values{}
	setIf(q, "projectId", params.ProjectID)
	setIf(q, "workspaceId", params.WorkspaceID)
	if params.IncludePromotedVersion {
		q.Set("includePromotedVersion", "true")
	}
	if params.DraftsOnly {
		q.Set("draftsOnly", "true")
	}
	var out []*wire.Canvas
	return out, c.get(ctx, "/prompt", q, &out)
}

// UpdateCanvas changes the fields patch names (title, projectId,
// customTags, layoutVersion, inferencesPercentage, allowedCredentials).
func (c *Client) UpdateCanvas(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*wire.Canvas, error) {
	var out wire.Canvas
	return &out, c.write(ctx, http.MethodPatch, "/prompt/"+esc(id), patch, &out, opts)
}

// DeleteCanvas soft-deletes a canvas.
func (c *Client) DeleteCanvas(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/prompt/"+esc(id), nil, nil, opts)
}

// Versions and messages.

// CreateVersion creates a version of a canvas.
func (c *Client) CreateVersion(ctx context.Context, params wire.CreateVersionParams, opts ...CallOption) (*wire.Version, error) {
	var out wire.Version
	return &out, c.write(ctx, http.MethodPost, "/prompt-version", params, &out, opts)
}

// GetVersion reads a version.
func (c *Client) GetVersion(ctx context.Context, id string) (*wire.Version, error) {
	var out wire.Version
	return &out, c.get(ctx, "/prompt-version/"+esc(id), nil, &out)
}

// ListVersions lists the versions of a canvas.
func (c *Client) ListVersions(ctx context.Context, canvasID string) ([]*wire.Version, error) {
	var out []*wire.Version
	return out, c.get(ctx, "/prompt-version", url.Values{"promptId": {canvasID}}, &out)
}

// UpdateVersion changes the fields patch names; configuration is merged key
// by key (RFC 7386), and promoted: true publishes the version to production.
func (c *Client) UpdateVersion(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*wire.Version, error) {
	var out wire.Version
	return &out, c.write(ctx, http.MethodPatch, "/prompt-version/"+esc(id), patch, &out, opts)
}

// DeleteVersion soft-deletes a version.
func (c *Client) DeleteVersion(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/prompt-version/"+esc(id), nil, nil, opts)
}

// CreateMessage adds a message to a version.
func (c *Client) CreateMessage(ctx context.Context, params wire.CreateMessageParams, opts ...CallOption) (*wire.Message, error) {
	var out wire.Message
	return &out, c.write(ctx, http.MethodPost, "/prompt-version-message", params, &out, opts)
}

// ListMessages lists a version's messages by index.
func (c *Client) ListMessages(ctx context.Context, versionID string) ([]*wire.Message, error) {
	var out []*wire.Message
	return out, c.get(ctx, "/prompt-version-message", url.Values{"promptVersionId": {versionID}}, &out)
}

// Environments.

// CreateEnvironment creates a custom environment of a canvas.
func (c *Client) CreateEnvironment(ctx context.Context, canvasID, name string, opts ...CallOption) (*wire.Environment, error) {
	var out wire.Environment
	body := wire.CreateEnvironmentRequest{ResourceType: wire.ResourcePrompt, ResourceID: canvasID, Name: name}
	return &out, c.write(ctx, http.MethodPost, "/environment", body, &out, opts)
}

// ListEnvironments lists a canvas' environments, production first.
func (c *Client) ListEnvironments(ctx context.Context, canvasID string) ([]*wire.Environment, error) {
	var out []*wire.Environment
	q := url.Values{"resourceType": {wire.ResourcePrompt}, "resourceId": {canvasID}}
	return out, c.get(ctx, "/environment", q, &out)
}

// DeleteEnvironment deletes a custom environment.
func (c *Client) DeleteEnvironment(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/environment/"+esc(id), nil, nil, opts)
}

// PublishParams name what Publish publishes where: exactly one of
// VersionID and Split.
type PublishParams struct {
	CanvasID  string
	EnvName   string
	VersionID string
	// Split serves 2 to 5 versions by weight (integers 1..99 summing to
	// 100); the publication's VersionID is the first entry's.
	Split []wire.SplitEntry
}

// Publish publishes a version, or a split of versions, to an environment
// (production or a custom one) and returns the active publication;
// publishing the active version or split again changes nothing, and
// publishing one version ends a split.
func (c *Client) Publish(ctx context.Context, params PublishParams, opts ...CallOption) (*wire.Publication, error) {
	var out wire.Publication
	body := wire.PublishRequest{ResourceType: wire.ResourcePrompt, ResourceID: params.CanvasID,
		EnvName: params.EnvName, VersionID: params.VersionID, Split: params.Split}
	return &out, c.write(ctx, http.MethodPost, "/environment/publish", body, &out, opts)
}

// SplitStatsParams select a publication of an environment: PublicationID,
// or the active one when it is empty.
type SplitStatsParams struct {
	CanvasID      string
	EnvName       string
	PublicationID string
}

// SplitStats reports, per variant of a publication, the runs it served:
// runs, errors, latency percentiles, cost and end-user feedback.
func (c *Client) SplitStats(ctx context.Context, params SplitStatsParams) (*wire.SplitStats, error) {
	q := envQuery(params.CanvasID, params.EnvName)
	if params.PublicationID != "" {
		q.Set("publicationId", params.PublicationID)
	}
	var out wire.SplitStats
	return &out, c.get(ctx, "/environment/split-stats", q, &out)
}

// HistoryParams select a page of an environment's publication history;
// a zero Limit takes the server's default.
type HistoryParams struct {
	CanvasID string
	EnvName  string
	Limit    int
	Offset   int
}

// History reads one page of an environment's publication history, newest
// first.
func (c *Client) History(ctx context.Context, params HistoryParams) (*wire.Page[*wire.Publication], error) {
	q := envQuery(params.CanvasID, params.EnvName)
	if params.Limit > 0 {
		q.Set("limit", strconv.Itoa(params.Limit))
	}
	if params.Offset > 0 {
		q.Set("offset", strconv.Itoa(params.Offset))
	}
	var out wire.Page[*wire.Publication]
	return &out, c.get(ctx, "/environment/versions", q, &out)
}

// ActiveVersion reads the version an environment serves. Prompts is the
// cached, watched way to do this.
func (c *Client) ActiveVersion(ctx context.Context, canvasID, envName string) (*wire.Version, error) {
	return c.AssignedVersion(ctx, canvasID, envName, "")
}

// AssignedVersion reads the version an environment serves to an assignment
// key: of a split, the same version for the same key while the
// publication is active; an empty key draws.
func (c *Client) AssignedVersion(ctx context.Context, canvasID, envName, assignmentKey string) (*wire.Version, error) {
	q := envQuery(canvasID, envName)
	if assignmentKey != "" {
		q.Set("assignmentKey", assignmentKey)
	}
	var out wire.Version
	return &out, c.get(ctx, "/environment/version", q, &out)
}

func envQuery(canvasID, envName string) url.Values {
	return url.Values{"resourceType": {wire.ResourcePrompt}, "resourceId": {canvasID}, "envName": {envName}}
}
