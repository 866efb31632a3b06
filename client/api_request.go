package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Protected environments and publication requests.

// SetEnvironmentPolicy sets the whole protection of an environment
// (admin): a protected environment is published to only through
// publication requests, and Publish to it answers an *Error whose Code is
// wire.CodeApprovalRequired.
func (c *Client) SetEnvironmentPolicy(ctx context.Context, envID string, policy wire.EnvironmentPolicyRequest, opts ...CallOption) (*wire.Environment, error) {
	var out wire.Environment
	return &out, c.write(ctx, http.MethodPatch, "/environment/"+esc(envID), policy, &out, opts)
}

// CreatePublicationRequest asks that a version (params.VersionID), or a
// split of versions (params.Split, 2 to 5 entries whose weights sum to
// 100), be published to an environment; principals other than the caller
// approve it, and the approval that reaches the environment's count
// publishes it.
func (c *Client) CreatePublicationRequest(ctx context.Context, params wire.PublicationRequestParams, opts ...CallOption) (*wire.PublicationRequest, error) {
	if params.ResourceType == "" {
		params.ResourceType = wire.ResourcePrompt
	}
	var out wire.PublicationRequest
	return &out, c.write(ctx, http.MethodPost, "/publication-requests", params, &out, opts)
}

// GetPublicationRequest reads a publication request.
func (c *Client) GetPublicationRequest(ctx context.Context, id string) (*wire.PublicationRequest, error) {
	var out wire.PublicationRequest
	return &out, c.get(ctx, "/publication-requests/"+esc(id), nil, &out)
}

// PublicationRequestFilter selects a page of publication requests; empty
// fields select all, a zero Limit takes the server's default.
type PublicationRequestFilter struct {
	CanvasID string
	Status   string
	Limit    int
	Offset   int
}

// ListPublicationRequests reads one page of the publication requests of
// the canvases the caller reaches, newest first.
func (c *Client) ListPublicationRequests(ctx context.Context, f PublicationRequestFilter) (*wire.Page[*wire.PublicationRequest], error) {
	q := url.Values{}
	if f.CanvasID != "" {
		q.Set("resourceId", f.CanvasID)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	var out wire.Page[*wire.PublicationRequest]
	return &out, c.get(ctx, "/publication-requests", q, &out)
}

// ApprovePublicationRequest approves a pending request as the caller; the
// approval that reaches the environment's required approvals publishes it
// (the answer's Status is then wire.RequestPublished).
func (c *Client) ApprovePublicationRequest(ctx context.Context, id, comment string, opts ...CallOption) (*wire.PublicationRequest, error) {
	return c.decide(ctx, id, "approve", comment, opts)
}

// RejectPublicationRequest rejects a pending request.
func (c *Client) RejectPublicationRequest(ctx context.Context, id, comment string, opts ...CallOption) (*wire.PublicationRequest, error) {
	return c.decide(ctx, id, "reject", comment, opts)
}

// WithdrawPublicationRequest withdraws a pending request the caller made.
func (c *Client) WithdrawPublicationRequest(ctx context.Context, id, comment string, opts ...CallOption) (*wire.PublicationRequest, error) {
	return c.decide(ctx, id, "withdraw", comment, opts)
}

func (c *Client) decide(ctx context.Context, id, verb, comment string, opts []CallOption) (*wire.PublicationRequest, error) {
	var out wire.PublicationRequest
	return &out, c.write(ctx, http.MethodPost, "/publication-requests/"+esc(id)+"/"+verb,
		wire.DecisionParams{Comment: comment}, &out, opts)
}

// DiffVersions reads what changes from the version against to the version
// id: messages, variables and configuration.
func (c *Client) DiffVersions(ctx context.Context, id, against string) (*wire.VersionDiff, error) {
	var out wire.VersionDiff
	return &out, c.get(ctx, "/prompt-version/"+esc(id)+"/diff", url.Values{"against": {against}}, &out)
}
