package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// Projects.

// CreateProject creates a project of the workspace.
func (c *Client) CreateProject(ctx context.Context, name string, opts ...CallOption) (*canvas.Project, error) {
	var p canvas.Project
	return &p, c.write(ctx, http.MethodPost, "/projects", map[string]string{"name": name}, &p, opts)
}

// ListProjects lists the projects of the workspace.
func (c *Client) ListProjects(ctx context.Context) ([]*canvas.Project, error) {
	var out []*canvas.Project
	return out, c.get(ctx, "/projects", nil, &out)
}

// Canvases.

// CreateCanvas creates a canvas.
func (c *Client) CreateCanvas(ctx context.Context, params canvas.CreateCanvasParams, opts ...CallOption) (*canvas.Canvas, error) {
	var out canvas.Canvas
	return &out, c.write(ctx, http.MethodPost, "/prompt", params, &out, opts)
}

// GetCanvas reads a canvas.
func (c *Client) GetCanvas(ctx context.Context, id string) (*canvas.Canvas, error) {
	var out canvas.Canvas
	return &out, c.get(ctx, "/prompt/"+esc(id), nil, &out)
}

// ListCanvases lists the canvases the caller can reach.
func (c *Client) ListCanvases(ctx context.Context, params canvas.ListCanvasesParams) ([]*canvas.Canvas, error) {
	q := url.Values{}
	setIf(q, "projectId", params.ProjectID)
	setIf(q, "workspaceId", params.WorkspaceID)
	if params.IncludePromotedVersion {
		q.Set("includePromotedVersion", "true")
	}
	if params.DraftsOnly {
		q.Set("draftsOnly", "true")
	}
	var out []*canvas.Canvas
	return out, c.get(ctx, "/prompt", q, &out)
}

// UpdateCanvas changes the fields patch names (title, projectId,
// customTags, layoutVersion, inferencesPercentage, allowedCredentials).
func (c *Client) UpdateCanvas(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*canvas.Canvas, error) {
	var out canvas.Canvas
	return &out, c.write(ctx, http.MethodPatch, "/prompt/"+esc(id), patch, &out, opts)
}

// DeleteCanvas soft-deletes a canvas.
func (c *Client) DeleteCanvas(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/prompt/"+esc(id), nil, nil, opts)
}

// Versions and messages.

// CreateVersion creates a version of a canvas.
func (c *Client) CreateVersion(ctx context.Context, params canvas.CreateVersionParams, opts ...CallOption) (*canvas.Version, error) {
	var out canvas.Version
	return &out, c.write(ctx, http.MethodPost, "/prompt-version", params, &out, opts)
}

// GetVersion reads a version.
func (c *Client) GetVersion(ctx context.Context, id string) (*canvas.Version, error) {
	var out canvas.Version
	return &out, c.get(ctx, "/prompt-version/"+esc(id), nil, &out)
}

// ListVersions lists the versions of a canvas.
func (c *Client) ListVersions(ctx context.Context, canvasID string) ([]*canvas.Version, error) {
	var out []*canvas.Version
	return out, c.get(ctx, "/prompt-version", url.Values{"promptId": {canvasID}}, &out)
}

// UpdateVersion changes the fields patch names; configuration is merged key
// by key (RFC 7386), and promoted: true publishes the version to production.
func (c *Client) UpdateVersion(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*canvas.Version, error) {
	var out canvas.Version
	return &out, c.write(ctx, http.MethodPatch, "/prompt-version/"+esc(id), patch, &out, opts)
}

// DeleteVersion soft-deletes a version.
func (c *Client) DeleteVersion(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/prompt-version/"+esc(id), nil, nil, opts)
}

// CreateMessage adds a message to a version.
func (c *Client) CreateMessage(ctx context.Context, params canvas.CreateMessageParams, opts ...CallOption) (*canvas.Message, error) {
	var out canvas.Message
	return &out, c.write(ctx, http.MethodPost, "/prompt-version-message", params, &out, opts)
}

// ListMessages lists a version's messages by index.
func (c *Client) ListMessages(ctx context.Context, versionID string) ([]*canvas.Message, error) {
	var out []*canvas.Message
	return out, c.get(ctx, "/prompt-version-message", url.Values{"promptVersionId": {versionID}}, &out)
}

// Environments.

// CreateEnvironment creates a custom environment of a canvas.
func (c *Client) CreateEnvironment(ctx context.Context, canvasID, name string, opts ...CallOption) (*env.Environment, error) {
	var out env.Environment
	body := map[string]string{"resourceType": env.ResourcePrompt, "resourceId": canvasID, "name": name}
	return &out, c.write(ctx, http.MethodPost, "/environment", body, &out, opts)
}

// ListEnvironments lists a canvas' environments, production first.
func (c *Client) ListEnvironments(ctx context.Context, canvasID string) ([]*env.Environment, error) {
	var out []*env.Environment
	q := url.Values{"resourceType": {env.ResourcePrompt}, "resourceId": {canvasID}}
	return out, c.get(ctx, "/environment", q, &out)
}

// DeleteEnvironment deletes a custom environment.
func (c *Client) DeleteEnvironment(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/environment/"+esc(id), nil, nil, opts)
}

// Publish publishes a version to an environment (production or a custom
// one) and returns the active publication; publishing the active version
// again changes nothing.
func (c *Client) Publish(ctx context.Context, params env.PublishVersionParams, opts ...CallOption) (*env.Publication, error) {
	var out env.Publication
	body := map[string]string{"resourceType": env.ResourcePrompt, "resourceId": params.CanvasID,
		"envName": params.EnvName, "versionId": params.VersionID}
	return &out, c.write(ctx, http.MethodPost, "/environment/publish", body, &out, opts)
}

// Page is one page of a paginated list.
type Page[T any] struct {
	Data []T      `json:"data"`
	Meta PageMeta `json:"meta"`
}

// PageMeta describes a page: the total, its bounds and position.
type PageMeta struct {
	TotalCount    int    `json:"totalCount"`
	Limit         int    `json:"limit"`
	Offset        int    `json:"offset"`
	CurrentPage   int    `json:"currentPage"`
	TotalPages    int    `json:"totalPages"`
	LastReference *int64 `json:"lastReference,omitempty"`
}

// History reads one page of an environment's publication history, newest
// first.
func (c *Client) History(ctx context.Context, params env.HistoryParams) (*Page[*env.Publication], error) {
	q := envQuery(params.CanvasID, params.EnvName)
	if params.Limit > 0 {
		q.Set("limit", strconv.Itoa(params.Limit))
	}
	if params.Offset > 0 {
		q.Set("offset", strconv.Itoa(params.Offset))
	}
	var out Page[*env.Publication]
	return &out, c.get(ctx, "/environment/versions", q, &out)
}

// ActiveVersion reads the version an environment serves. Prompts is the
// cached, watched way to do this.
func (c *Client) ActiveVersion(ctx context.Context, canvasID, envName string) (*canvas.Version, error) {
	var out canvas.Version
	return &out, c.get(ctx, "/environment/version", envQuery(canvasID, envName), &out)
}

func envQuery(canvasID, envName string) url.Values {
	return url.Values{"resourceType": {env.ResourcePrompt}, "resourceId": {canvasID}, "envName": {envName}}
}
