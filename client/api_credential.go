package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Credentials and model prices.

// CreateCredential stores a workspace's key to a model vendor (admin).
// The key is sealed by the server and never returned.
func (c *Client) CreateCredential(ctx context.Context, params wire.CreateCredentialParams, opts ...CallOption) (*wire.Credential, error) {
	var out wire.Credential
	return &out, c.write(ctx, http.MethodPost, "/credentials", params, &out, opts)
}

// GetCredential reads a credential (never its key).
func (c *Client) GetCredential(ctx context.Context, id string) (*wire.Credential, error) {
	var out wire.Credential
	return &out, c.get(ctx, "/credentials/"+esc(id), nil, &out)
}

// ListCredentialsParams filter ListCredentials; empty fields do not
// filter.
type ListCredentialsParams struct {
	Provider  string
	ProjectID string
	Limit     int
	Offset    int
}

// ListCredentials lists one page of the workspace's credentials.
func (c *Client) ListCredentials(ctx context.Context, params ListCredentialsParams) (*wire.Page[*wire.Credential], error) {
	q := url.Values{}
	setIf(q, "provider", params.Provider)
	setIf(q, "projectId", params.ProjectID)
	pageQuery(q, params.Limit, params.Offset)
	var out wire.Page[*wire.Credential]
	return &out, c.get(ctx, "/credentials", q, &out)
}

// UpdateCredential applies a partial update to a credential (admin):
// patch members are those of PATCH /credentials/{id} ("name", "apiKey"
// to rotate the key, "baseUrl", "projectIds", "settings" as a merge
// patch).
func (c *Client) UpdateCredential(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*wire.Credential, error) {
	var out wire.Credential
	return &out, c.write(ctx, http.MethodPatch, "/credentials/"+esc(id), patch, &out, opts)
}

// DeleteCredential deletes a credential and erases its key (admin).
func (c *Client) DeleteCredential(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/credentials/"+esc(id), nil, nil, opts)
}

// ListModels lists one page of the workspace's model prices: the bundled
// catalogue with the workspace's overrides; provider "" lists every
// provider's.
func (c *Client) ListModels(ctx context.Context, provider string, limit, offset int) (*wire.Page[*wire.ModelPrice], error) {
	q := url.Values{}
	setIf(q, "provider", provider)
	pageQuery(q, limit, offset)
	var out wire.Page[*wire.ModelPrice]
	return &out, c.get(ctx, "/models", q, &out)
}

// SetModelPrice sets the workspace's price of a model (admin).
func (c *Client) SetModelPrice(ctx context.Context, name string, params wire.SetModelPriceParams, opts ...CallOption) (*wire.ModelPrice, error) {
	var out wire.ModelPrice
	return &out, c.write(ctx, http.MethodPut, "/models/"+esc(name), params, &out, opts)
}

// DeleteModelPrice removes the workspace's price of a model, which then
// costs what the catalogue says (admin).
func (c *Client) DeleteModelPrice(ctx context.Context, name string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/models/"+esc(name), nil, nil, opts)
}

// pageQuery sets a list's limit and offset when they are given.
func pageQuery(q url.Values, limit, offset int) {
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
}
