package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditPage is a page of GET /audit-events as the tests read it.
type auditPage struct {
	Data []struct {
		ID           string         `json:"id"`
		Seq          int64          `json:"seq"`
		Actor        map[string]any `json:"actor"`
		Action       string         `json:"action"`
		ResourceType string         `json:"resourceType"`
		ResourceID   string         `json:"resourceId"`
		Before       map[string]any `json:"before"`
		After        map[string]any `json:"after"`
		RequestID    string         `json:"requestId"`
		RemoteAddr   string         `json:"remoteAddr"`
		PrevHash     string         `json:"prevHash"`
		Hash         string         `json:"hash"`
	} `json:"data"`
	Meta struct {
		Total int `json:"totalCount"`
	} `json:"meta"`
}

// auditEvents reads a page of the workspace's audit events.
func auditEvents(t *testing.T, e *testEnv, query string) auditPage {
	t.Helper()
	r := e.Do(http.MethodGet, "/audit-events"+query, e.Admin, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var p auditPage
	r.JSON(t, &p)
	return p
}

// notChanges are the write routes that change no configuration of the
// workspace, and so leave no audit event: they run models or workflows,
// or control such runs, send webhooks, record end users' feedback on a
// run, or receive an upload's bytes (a public route, whose file record
// was audited when it was made).
var notChanges = map[string]bool{
	"POST /v2/chat/completions":                true,
	"POST /v2/chat/completions/{id}/feedback":  true,
	"POST /openai/v1/chat/completions":         true,
	"POST /v1/tasks":                           true,
	"POST /test-case/{id}/run":                 true,
	"POST /test-case/run":                      true,
	"POST /test-case/generations/{id}/abort":   true,
	"POST /workflow/runs":                      true,
	"POST /workflow/runs/{id}/cancel":          true,
	"POST /workflow/runs/{id}/review":          true,
	"POST /workflow/runs/{id}/resume":          true,
	"POST /webhooks/deliveries/{id}/redeliver": true,
	"POST /applications/{id}/events/test":      true,
	"PUT /v3/files/{id}/content":               true,
}

// TestAudit_EveryWriteRoute sends the request of every write route of the
// route table and reads the audit log after each: every route that
// changes the workspace leaves exactly one event, by the caller, carrying
// the request's id; the others leave none.
func TestAudit_EveryWriteRoute(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range cases {
		if c.method() == http.MethodGet || c.method() == http.MethodHead || c.role == "" && !notChanges[c.route] {
			continue
		}
		t.Run(c.route, func(t *testing.T) {
			key, ok := e.Admin, c.ok
			if c.route == "POST /publication-requests/{id}/withdraw" {
				key, ok = w.Requester, http.StatusOK
			}
			req := c.request(t) // what it makes first is not the route's change
			c.request = func(*testing.T) routeRequest { return req }
			before := auditEvents(t, e.testEnv, "?limit=1").Meta.Total
			r := c.send(t, e.testEnv, key)
			require.Equal(t, ok, r.Status, "%s", r.Body)
			after := auditEvents(t, e.testEnv, "?limit=1")
			if notChanges[c.route] {
				assert.Equal(t, before, after.Meta.Total, "a route that changes nothing leaves no event")
				return
			}
			require.Equal(t, before+1, after.Meta.Total, "one event per change")
			got := after.Data[0]
			assert.Equal(t, r.Header.Get("X-Request-Id"), got.RequestID)
			assert.NotEmpty(t, got.RemoteAddr)
			assert.Equal(t, "apiKey", got.Actor["type"])
			assert.Len(t, got.Hash, 64)
			assert.NotEmpty(t, got.PrevHash, "the world's changes came first")
			assert.True(t, got.Before != nil || got.After != nil, "an event shows the resource before or after")
		})
	}
}
