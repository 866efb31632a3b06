package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// The typed calls (api_*.go) send and answer the types of package wire.
// Every error the server answers is an *Error; writes take CallOptions
// (WithIdempotencyKey).

// get reads path into out.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	_, err := c.call(ctx, request{method: http.MethodGet, path: path, query: query, out: out})
	return err
}

// write sends body to path with method and reads the answer into out. A
// POST body is sent without its null fields and top-level empty strings:
// a params struct means "the default" by both, which the server's schemas
// spell as an absent field.
func (c *Client) write(ctx context.Context, method, path string, body, out any, opts []CallOption) error {
	if method == http.MethodPost && body != nil {
		compacted, err := compact(body)
		if err != nil {
			return err
		}
		body = compacted
	}
	_, err := c.call(ctx, request{method: method, path: path, body: body, out: out}, opts...)
	return err
}

// compact returns v as JSON without null members (at any depth) and
// without top-level members that are empty strings.
func compact(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return raw, nil // not an object: sent as it is
	}
	for k, x := range m {
		if x == "" {
			delete(m, k)
		}
	}
	return json.Marshal(dropNulls(m))
}

func dropNulls(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if v == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(v)
			}
		}
	case []any:
		for i, v := range t {
			t[i] = dropNulls(v)
		}
	}
	return x
}

func esc(id string) string { return url.PathEscape(id) }

func setIf(q url.Values, name, value string) {
	if value != "" {
		q.Set(name, value)
	}
}
