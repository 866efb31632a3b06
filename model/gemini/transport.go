package gemini

import (
	"context"
	"net/http"
	"sync"

	"cloud.google.com/go/auth"
)

// callInfo keeps what the transport saw of one call's response: its
// headers, for the Retry-After of a failure (the SDK's APIError does not
// carry them).
type callInfo struct {
	mu     sync.Mutex
	header http.Header
}

// Header returns the headers of the call's last response, or nil.
func (c *callInfo) Header() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.header
}

type callKey struct{}

// withCall returns ctx carrying c, for the transport to fill.
func withCall(ctx context.Context, c *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// transport authorizes requests with a service account's token when creds
// is set, and records each response's headers in the callInfo of the
// request's context.
type transport struct {
	base  http.RoundTripper
	creds *auth.Credentials
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.creds != nil {
		tok, err := t.creds.Token(req.Context())
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		typ := tok.Type
		if typ == "" {
			typ = "Bearer"
		}
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", typ+" "+tok.Value)
	}
	resp, err := t.base.RoundTrip(req)
	if c, ok := req.Context().Value(callKey{}).(*callInfo); ok && resp != nil {
		c.mu.Lock()
		c.header = resp.Header.Clone()
		c.mu.Unlock()
	}
	return resp, err
}
