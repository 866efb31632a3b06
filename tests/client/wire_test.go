package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/require"
)

// strictGet reads path from the server and decodes its answer into a new
// T refusing unknown members: every member the server writes has a field
// in the wire type.
func strictGet[T any](t *testing.T, ts *testServer, path string, query url.Values) *T {
	t.Helper()
	u := ts.URL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+ts.token)
	req.Header.Set("x-compatibility-date", client.CompatibilityDate)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
	out := new(T)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(out), "%s: %s", path, body)
	return out
}

// TestWire_ServerAnswers reads what a real server answers into the wire
// types strictly; tests/wire checks every field of the domain types, this
// checks the answers as the server assembles them.
func TestWire_ServerAnswers(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, c, 2)
	f.publish(t, c, wire.Production, 1)
	f.publish(t, c, wire.Production, 2)
	req := wire.CompletionRequest{CanvasID: f.Canvas.ID, Variables: map[string]any{"name": "Ada"}}
	_, err := c.Complete(ctx, req)
	require.NoError(t, err)
	acc, err := c.CompleteAsync(ctx, req)
	require.NoError(t, err)
	up, err := c.CreateFile(ctx, "notes.txt")
	require.NoError(t, err)
	_, err = c.UploadFile(ctx, up, "text/plain", []byte("hello"))
	require.NoError(t, err)

	prompt := url.Values{"resourceType": {wire.ResourcePrompt}, "resourceId": {f.Canvas.ID}}
	production := url.Values{"resourceType": {wire.ResourcePrompt}, "resourceId": {f.Canvas.ID}, "envName": {wire.Production}}
	strictGet[[]*wire.Project](t, ts, "/projects", nil)
	strictGet[wire.Canvas](t, ts, "/prompt/"+f.Canvas.ID, nil)
	strictGet[[]*wire.Canvas](t, ts, "/prompt", url.Values{"includePromotedVersion": {"true"}})
	strictGet[wire.Version](t, ts, "/prompt-version/"+f.Versions[0].ID, nil)
	strictGet[[]*wire.Message](t, ts, "/prompt-version-message", url.Values{"promptVersionId": {f.Versions[0].ID}})
	strictGet[[]*wire.Environment](t, ts, "/environment", prompt)
	strictGet[wire.Page[*wire.Publication]](t, ts, "/environment/versions", production)
	strictGet[wire.Version](t, ts, "/environment/version", production)
	strictGet[wire.Run](t, ts, "/v2/chat/completions/"+acc.ID, nil)
	strictGet[wire.Page[*wire.Run]](t, ts, "/v2/chat/completions", url.Values{"objectLinks": {"true"}})
	strictGet[wire.File](t, ts, "/v3/files/"+up.ID, nil)
	strictGet[wire.Page[*wire.LoggedDelivery]](t, ts, "/webhooks/deliveries", nil)
}
