package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// userJWT returns a JWT of the full test server for the user sub with role.
func userJWT(t *testing.T, e *fullEnv, sub string, role canvas.Role) string {
	t.Helper()
	now := time.Now()
	return mustSign(t, jwt.SigningMethodHS256, fullJWTSecret, "", jwt.MapClaims{"sub": sub,
		"workspace_id": e.Workspace.ID, "role": string(role), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
}

// TestPublicationRequests_TwoPeople: production, protected with two
// approvals, moves only when two principals other than the requester
// approved; the requester's own approval and a second one by the same
// person are refused, and each step of the request is a webhook event.
func TestPublicationRequests_TwoPeople(t *testing.T) {
	e := newFullEnv(t)
	p := mustProjectID(t, e.testEnv, "p")
	c := mustCanvas(t, e.testEnv, p, "support")["id"].(string)
	version := func(text string) string {
		return mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c,
			"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": text}})["id"].(string)
	}
	v1, v2 := version("Hello"), version("Bonjour")
	publish(t, e.testEnv, c, v1)
	mustApplication(t, e.testEnv, map[string]any{"name": "audit", "promptId": c,
		"events": map[string]any{"enabled": true, "url": "https://example.com/hook"}})
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+c, e.Viewer, nil)
	var envs []map[string]any
	r.JSON(t, &envs)
	protect(t, e.testEnv, envs[0]["id"].(string), map[string]any{"protected": true, "requiredApprovals": 2})

	requester := e.Key(canvas.RoleEditor)
	r = e.Do(http.MethodPost, "/publication-requests", requester, map[string]any{"resourceType": "prompt",
		"resourceId": c, "envName": "production", "versionId": v2, "comment": "French greeting"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	req := r.Map(t)
	id := req["id"].(string)
	assert.Equal(t, "pending", req["status"])
	assert.Equal(t, float64(2), req["requiredApprovals"])
	assert.Equal(t, v1, req["baseVersionId"])
	assert.Equal(t, "/prompt-version/"+v2+"/diff?against="+v1, req["diffPath"])
	assert.Contains(t, req["requestedBy"], "key:")

	decide := func(verb, token string, wantStatus int) map[string]any {
		t.Helper()
		r := e.Do(http.MethodPost, "/publication-requests/"+id+"/"+verb, token, map[string]any{"comment": verb})
		require.Equal(t, wantStatus, r.Status, "%s", r.Body)
		return r.Map(t)
	}
	direct := e.Do(http.MethodPost, "/environment/publish", e.Admin, map[string]any{"resourceType": "prompt",
		"resourceId": c, "envName": "production", "versionId": v2})
	require.Equal(t, http.StatusConflict, direct.Status)
	assert.Equal(t, canvas.EAPPROVALREQUIRED, readError(t, direct).Code)

	assert.Equal(t, canvas.EFORBIDDEN, decide("approve", requester, http.StatusForbidden)["code"], "self-approval")
	assert.Equal(t, canvas.EFORBIDDEN, decide("approve", e.Viewer, http.StatusForbidden)["code"], "a viewer")
	assert.Equal(t, canvas.EFORBIDDEN, decide("withdraw", e.Editor, http.StatusForbidden)["code"], "not the requester")
	ana := userJWT(t, e, "ana", canvas.RoleEditor)
	got := decide("approve", ana, http.StatusOK)
	assert.Equal(t, "pending", got["status"])
	assert.Len(t, got["approvals"], 1)
	again := userJWT(t, e, "ana", canvas.RoleAdmin) // another token, the same person
	assert.Equal(t, canvas.ECONFLICT, decide("approve", again, http.StatusConflict)["code"], "a second approval by ana")
	served := e.Do(http.MethodGet, "/environment/version?resourceType=prompt&resourceId="+c+"&envName=production", e.Viewer, nil)
	assert.Equal(t, v1, served.Map(t)["id"], "one approval of two publishes nothing")

	got = decide("approve", e.Admin, http.StatusOK)
	assert.Equal(t, "published", got["status"])
	assert.NotNil(t, got["publicationId"])
	assert.Len(t, got["approvals"], 2)
	served = e.Do(http.MethodGet, "/environment/version?resourceType=prompt&resourceId="+c+"&envName=production", e.Viewer, nil)
	assert.Equal(t, v2, served.Map(t)["id"], "the second approval published")
	assert.Equal(t, canvas.ECONFLICT, decide("reject", e.Editor, http.StatusConflict)["code"], "a published request is final")

	list := e.Do(http.MethodGet, "/publication-requests?status=published&resourceId="+c, e.Viewer, nil)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	list.JSON(t, &page)
	require.Len(t, page.Data, 1)
	assert.Equal(t, id, page.Data[0]["id"])

	// Every step since the application subscribed was queued for it, with
	// the publication's own event.
	jobs, err := e.Engine.Store.ClaimJobs(context.Background(), "t", []string{webhook.JobKindCanvasEvent}, 100, time.Minute)
	require.NoError(t, err)
	var types []string
	for _, j := range jobs {
		var ev webhook.CanvasEvent
		require.NoError(t, json.Unmarshal(j.Payload, &ev))
		types = append(types, ev.Type)
	}
	assert.ElementsMatch(t, []string{"publication_request.created", "publication_request.approved",
		"publication_request.approved", "publication_request.published", "publication.created"}, types)
}

// TestPublicationRequests_RejectWithdrawStale: reject and withdraw end a request without
// publishing; a stale request says its environment moved.
func TestPublicationRequests_RejectWithdrawStale(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 3)
	ec.mustPublish(t, "production", 1)
	requester := e.Key(canvas.RoleEditor)
	request := func(i int) string {
		r := e.Do(http.MethodPost, "/publication-requests", requester, map[string]any{"resourceType": "prompt",
			"resourceId": ec.Canvas.ID, "envName": "production", "versionId": ec.Versions[i-1].ID})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		return r.Map(t)["id"].(string)
	}
	rejected, withdrawn, stale := request(2), request(2), request(3)
	r := e.Do(http.MethodPost, "/publication-requests/"+rejected+"/reject", e.Editor, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "rejected", r.Map(t)["status"])
	r = e.Do(http.MethodPost, "/publication-requests/"+withdrawn+"/withdraw", requester, map[string]any{"comment": "too early"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "withdrawn", r.Map(t)["status"])
	assert.Equal(t, "too early", r.Map(t)["decisionComment"])

	ec.mustPublish(t, "production", 2) // production is not protected: it moves directly
	r = e.Do(http.MethodGet, "/publication-requests/"+stale, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	got := r.Map(t)
	assert.Equal(t, true, got["stale"])
	assert.Equal(t, ec.Versions[1].ID, got["currentVersionId"])

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/publication-requests?status=open", http.StatusUnprocessableEntity},
		{"/publication-requests?resourceId=nope", http.StatusUnprocessableEntity},
		{"/publication-requests/" + ec.Canvas.ID, http.StatusNotFound},
	} {
		r := e.Do(http.MethodGet, c.path, e.Viewer, nil)
		assert.Equal(t, c.status, r.Status, "%s: %s", c.path, r.Body)
	}
	r = e.Do(http.MethodPost, "/publication-requests", requester, map[string]any{"resourceType": "prompt",
		"resourceId": ec.Canvas.ID, "envName": "production", "versionId": ec.Versions[1].ID})
	assert.Equal(t, http.StatusConflict, r.Status, "the environment serves it already: %s", r.Body)
}

// TestPublicationRequests_Watch: the publish an approval makes is seen by
// the environment watch, as every publish is.
func TestPublicationRequests_Watch(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+ec.Canvas.ID, e.Viewer, nil)
	var envs []map[string]any
	r.JSON(t, &envs)
	protect(t, e, envs[0]["id"].(string), map[string]any{"protected": true})
	ws := openWatch(t, ec, e.Viewer, "", "production")
	assert.Equal(t, ec.Versions[0].ID, ws.next(t).VersionID)

	r = e.Do(http.MethodPost, "/publication-requests", e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": ec.Canvas.ID, "envName": "production", "versionId": ec.Versions[1].ID})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r = e.Do(http.MethodPost, "/publication-requests/"+r.Map(t)["id"].(string)+"/approve", e.Admin, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	ev := ws.next(t)
	assert.Equal(t, "version", ev.Type)
	assert.Equal(t, ec.Versions[1].ID, ev.VersionID)
	assert.Equal(t, r.Map(t)["publicationId"], ev.PublicationID)
}

// TestVersions_Diff: a version's differences from another, as a
// publication request's diffPath serves them.
func TestVersions_Diff(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	v2 := ec.Versions[1].ID
	r := e.Do(http.MethodPatch, "/prompt-version/"+v2, e.Editor, map[string]any{"configuration": map[string]any{"temperature": 0.9},
		"variables": []map[string]any{{"name": "name", "type": "text", "required": true}, {"name": "tone", "type": "text"}}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = e.Do(http.MethodPost, "/publication-requests", e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": ec.Canvas.ID, "envName": "production", "versionId": v2})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	path := r.Map(t)["diffPath"].(string)

	r = e.Do(http.MethodGet, path, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var d struct {
		VersionID string `json:"versionId"`
		AgainstID string `json:"againstId"`
		Identical bool   `json:"identical"`
		Messages  []struct {
			Index  int            `json:"index"`
			Change string         `json:"change"`
			Before map[string]any `json:"before"`
			After  map[string]any `json:"after"`
		} `json:"messages"`
		Variables []struct {
			Name   string `json:"name"`
			Change string `json:"change"`
		} `json:"variables"`
		Configuration []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
			Before any    `json:"before"`
			After  any    `json:"after"`
		} `json:"configuration"`
	}
	r.JSON(t, &d)
	assert.Equal(t, v2, d.VersionID)
	assert.Equal(t, ec.Versions[0].ID, d.AgainstID)
	assert.False(t, d.Identical)
	require.Len(t, d.Messages, 1)
	assert.Equal(t, "changed", d.Messages[0].Change)
	assert.Equal(t, "Prompt 1 for {{name}}", d.Messages[0].Before["content"])
	assert.Equal(t, "Prompt 2 for {{name}}", d.Messages[0].After["content"])
	require.Len(t, d.Variables, 2)
	assert.Equal(t, "name", d.Variables[0].Name)
	assert.Equal(t, "changed", d.Variables[0].Change, "the description was dropped")
	assert.Equal(t, "tone", d.Variables[1].Name)
	assert.Equal(t, "added", d.Variables[1].Change)
	require.Len(t, d.Configuration, 1)
	assert.Equal(t, "/temperature", d.Configuration[0].Path)
	assert.Equal(t, 0.3, d.Configuration[0].Before)
	assert.Equal(t, 0.9, d.Configuration[0].After)

	r = e.Do(http.MethodGet, "/prompt-version/"+v2+"/diff?against="+v2, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, true, r.Map(t)["identical"])
	r = e.Do(http.MethodGet, "/prompt-version/"+v2+"/diff", e.Viewer, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status)
	r = e.Do(http.MethodGet, "/prompt-version/"+v2+"/diff?against="+ec.Canvas.ID, e.Viewer, nil)
	assert.Equal(t, http.StatusNotFound, r.Status)
}
