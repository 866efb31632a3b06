package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// AuditFilter selects audit events; zero members select everything.
type AuditFilter struct {
	ResourceType, ResourceID string
	// Actor is an API key's id or a user's sub.
	Actor, Action string
	// Since is inclusive, Until exclusive; zero for none.
	Since, Until  time.Time
	Limit, Offset int
}

// ListAuditEvents lists a page of the workspace's audit events, newest
// first; it needs an admin key.
func (c *Client) ListAuditEvents(ctx context.Context, f AuditFilter) (*wire.Page[*wire.AuditEvent], error) {
	q := url.Values{}
	for name, v := range map[string]string{"resourceType": f.ResourceType, "resourceId": f.ResourceID,
		"actor": f.Actor, "action": f.Action} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	var out wire.Page[*wire.AuditEvent]
	return &out, c.get(ctx, "/audit-events", q, &out)
}

// Me returns who the client's token is: its workspace, its actor id as
// records keep it, its name, role and projects.
func (c *Client) Me(ctx context.Context) (*wire.Me, error) {
	var out wire.Me
	return &out, c.get(ctx, "/me", nil, &out)
}
