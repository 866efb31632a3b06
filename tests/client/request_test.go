package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// keyClient returns a client of the server with a new API key of role.
func (ts *testServer) keyClient(t *testing.T, role canvas.Role) *client.Client {
	t.Helper()
	ctx := context.Background()
	ws, err := ts.eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	token, key := canvas.NewAPIKey(ws.ID, role, nil)
	require.NoError(t, ts.eng.Store.CreateAPIKey(ctx, key))
	c, err := client.New(ts.URL, client.Options{Token: token})
	require.NoError(t, err)
	return c
}

// postJSON sends a JSON body with the admin token and decodes the answer,
// for the routes the client has no call of.
func (ts *testServer) postJSON(t *testing.T, path string, body, out any) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+ts.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, "%s", path)
	if out != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
}

// requireCode fails unless err is the server's answer with code.
func requireCode(t *testing.T, code string, err error) {
	t.Helper()
	var e *client.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, code, e.Code, "%v", err)
}

// TestClient_PublicationRequests protects production with two approvals
// and an experiment gate, through the client: a direct publish is
// APPROVAL_REQUIRED; a request is refused until an experiment of its
// version over the tag passes, then published by two people who are not
// its requester.
func TestClient_PublicationRequests(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	admin := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, admin, 2)
	f.publish(t, admin, "production", 1)

	var tag struct {
		ID string `json:"id"`
	}
	ts.postJSON(t, "/test-case-tags", map[string]any{"name": "smoke", "promptId": f.Canvas.ID}, &tag)
	var cases []string
	for _, name := range []string{"Ada", "Grace"} {
		expected := "Prompt 2 for " + name
		tc, err := admin.CreateTestCase(ctx, wire.CreateTestCaseParams{PromptID: f.Canvas.ID, Title: name,
			Variables: map[string]any{"name": name}, ExpectedOutput: &expected})
		require.NoError(t, err)
		cases = append(cases, tc.ID)
	}
	ts.postJSON(t, "/test-case/bulk-add-tags", map[string]any{"testCaseIds": cases, "tagIds": []string{tag.ID}}, nil)

	envs, err := admin.ListEnvironments(ctx, f.Canvas.ID)
	require.NoError(t, err)
	prod, err := admin.SetEnvironmentPolicy(ctx, envs[0].ID, wire.EnvironmentPolicyRequest{Protected: true,
		RequiredApprovals: 2, RequiredExperiment: &wire.RequiredExperiment{TagIDs: []string{tag.ID}, MinPassRate: 0.9}})
	require.NoError(t, err)
	assert.True(t, prod.Protected)
	assert.Equal(t, 2, prod.RequiredApprovals)

	_, err = admin.Publish(ctx, client.PublishParams{CanvasID: f.Canvas.ID, EnvName: wire.Production, VersionID: f.Versions[1].ID})
	requireCode(t, wire.CodeApprovalRequired, err)
	assert.Contains(t, err.Error(), "POST /publication-requests")

	alice, bob := ts.keyClient(t, canvas.RoleEditor), ts.keyClient(t, canvas.RoleEditor)
	r, err := alice.CreatePublicationRequest(ctx, wire.PublicationRequestParams{ResourceID: f.Canvas.ID,
		EnvName: wire.Production, VersionID: f.Versions[1].ID, Comment: "v2 greets better"})
	require.NoError(t, err)
	assert.Equal(t, wire.RequestPending, r.Status)
	require.NotNil(t, r.BaseVersionID)
	diff, err := bob.DiffVersions(ctx, r.VersionID, *r.BaseVersionID)
	require.NoError(t, err)
	require.Len(t, diff.Messages, 1)
	assert.Equal(t, wire.ChangeChanged, diff.Messages[0].Change)
	assert.Equal(t, "Prompt 2 for {{name}}", diff.Messages[0].After.Content)
	_, err = bob.ApprovePublicationRequest(ctx, r.ID, "lgtm")
	requireCode(t, wire.CodeConflict, err) // no experiment yet

	x, err := admin.StartExperiment(ctx, wire.ExperimentRequest{PromptID: f.Canvas.ID, VersionIDs: []string{f.Versions[1].ID},
		TagIDs: []string{tag.ID}, Evaluators: []wire.ExperimentEvaluator{{Name: "exact", Type: "exact"}}})
	require.NoError(t, err)
	done, err := admin.WaitExperiment(ctx, x.ID, 20*time.Millisecond, nil)
	require.NoError(t, err)
	require.Equal(t, wire.ExperimentCompleted, done.Status)

	got, err := bob.ApprovePublicationRequest(ctx, r.ID, "lgtm")
	require.NoError(t, err)
	assert.Equal(t, wire.RequestPending, got.Status)
	_, err = bob.ApprovePublicationRequest(ctx, r.ID, "again")
	requireCode(t, wire.CodeConflict, err)
	_, err = alice.ApprovePublicationRequest(ctx, r.ID, "mine")
	requireCode(t, wire.CodeForbidden, err)

	got, err = admin.ApprovePublicationRequest(ctx, r.ID, "")
	require.NoError(t, err)
	assert.Equal(t, wire.RequestPublished, got.Status)
	require.Len(t, got.Approvals, 2)
	served, err := admin.ActiveVersion(ctx, f.Canvas.ID, wire.Production)
	require.NoError(t, err)
	assert.Equal(t, f.Versions[1].ID, served.ID)

	page, err := admin.ListPublicationRequests(ctx, client.PublicationRequestFilter{CanvasID: f.Canvas.ID,
		Status: wire.RequestPublished})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.Equal(t, r.ID, page.Data[0].ID)
	again, err := bob.GetPublicationRequest(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, got.PublicationID, again.PublicationID)
}

// TestClient_SplitPublicationRequest asks through the client for a 70/30
// split of a protected production, which one approval publishes.
func TestClient_SplitPublicationRequest(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	admin := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, admin, 3)
	f.publish(t, admin, "production", 1)
	envs, err := admin.ListEnvironments(ctx, f.Canvas.ID)
	require.NoError(t, err)
	_, err = admin.SetEnvironmentPolicy(ctx, envs[0].ID, wire.EnvironmentPolicyRequest{Protected: true, RequiredApprovals: 1})
	require.NoError(t, err)

	split := []wire.SplitEntry{{VersionID: f.Versions[1].ID, Weight: 70}, {VersionID: f.Versions[2].ID, Weight: 30}}
	alice := ts.keyClient(t, canvas.RoleEditor)
	_, err = alice.CreatePublicationRequest(ctx, wire.PublicationRequestParams{ResourceID: f.Canvas.ID,
		EnvName: wire.Production, Split: []wire.SplitEntry{{VersionID: f.Versions[1].ID, Weight: 70}}})
	requireCode(t, wire.CodeInvalid, err)
	r, err := alice.CreatePublicationRequest(ctx, wire.PublicationRequestParams{ResourceID: f.Canvas.ID,
		EnvName: wire.Production, Split: split, Comment: "try v3 on 30 percent"})
	require.NoError(t, err)
	assert.Equal(t, f.Versions[1].ID, r.VersionID)
	assert.Equal(t, split, r.Split)

	got, err := admin.ApprovePublicationRequest(ctx, r.ID, "")
	require.NoError(t, err)
	assert.Equal(t, wire.RequestPublished, got.Status)
	assert.Equal(t, split, got.Split)
	hist, err := admin.History(ctx, client.HistoryParams{CanvasID: f.Canvas.ID, EnvName: wire.Production})
	require.NoError(t, err)
	require.NotEmpty(t, hist.Data)
	assert.Equal(t, split, hist.Data[0].Split)
	assert.Equal(t, *got.PublicationID, hist.Data[0].PublicationID)
}
