package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/experiment"
)

// requestBody is a publication request of the world's canvas to
// production.
func (w *splitWorld) requestBody(fields map[string]any) map[string]any {
	body := w.publishBody(fields)
	body["comment"] = "A/B"
	return body
}

// protectProduction publishes v1 to the world's production, then protects
// production with policy.
func (w *splitWorld) protectProduction(t *testing.T, policy map[string]any) {
	t.Helper()
	w.publish(w.canvasID, "production", w.v1)
	r := w.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+w.canvasID, w.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var envs []map[string]any
	r.JSON(t, &envs)
	require.Equal(t, "production", envs[0]["name"])
	protect(t, w.testEnv, envs[0]["id"].(string), policy)
}

// TestPublicationRequests_SplitValidation: a request names exactly one of
// versionId and split, and its split is checked as a publish's is, each
// problem at its pointer.
func TestPublicationRequests_SplitValidation(t *testing.T) {
	w := newSplitWorld(t)
	other := w.mustVersion(w.canvas("Other"), "other")
	for name, tc := range map[string]struct {
		fields map[string]any
		path   string
	}{
		"Both":         {map[string]any{"versionId": w.v1, "split": split(w.v1, 50, w.v2, 50)}, ""},
		"Neither":      {map[string]any{}, ""},
		"OneEntry":     {map[string]any{"split": split(w.v1, 99)}, "/json/split"},
		"Six":          {map[string]any{"split": split(w.v1, 10, w.v2, 10, w.v3, 20, other, 20, w.v1, 20, w.v2, 20)}, "/json/split"},
		"Weight":       {map[string]any{"split": split(w.v1, 100, w.v2, 0)}, "/json/split/1/weight"},
		"Sum":          {map[string]any{"split": split(w.v1, 60, w.v2, 30)}, "/json/split"},
		"Repeated":     {map[string]any{"split": split(w.v1, 50, w.v1, 50)}, "/json/split/1/versionId"},
		"OtherCanvas":  {map[string]any{"split": split(w.v1, 50, other, 50)}, "/json/split/1/versionId"},
		"NotAVersion":  {map[string]any{"split": split(w.v1, 50, "not-a-uuid", 50)}, "/json/split/1/versionId"},
		"UnknownField": {map[string]any{"split": []any{map[string]any{"versionId": w.v1, "weight": 50, "label": "a"}, map[string]any{"versionId": w.v2, "weight": 50}}}, "/json/split/0/label"},
	} {
		t.Run(name, func(t *testing.T) {
			res := w.Do(http.MethodPost, "/publication-requests", w.Editor, w.requestBody(tc.fields))
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
			b := readError(t, res)
			assert.Equal(t, canvas.EINVALID, b.Code)
			if tc.path != "" {
				var paths []string
				for _, d := range b.Details {
					paths = append(paths, d.Path)
				}
				assert.Contains(t, paths, tc.path, "%s", res.Body)
			}
		})
	}
	res := w.Do(http.MethodPost, "/publication-requests", w.Viewer, w.requestBody(map[string]any{"split": split(w.v1, 70, w.v2, 30)}))
	assert.Equal(t, http.StatusForbidden, res.Status, "a viewer: %s", res.Body)
}

// TestPublicationRequests_Split: a 70/30 split of a protected production
// is requested, refused to a direct publish, published by two approvals,
// and then served by weight; a request whose second version was edited
// since it was made is refused.
func TestPublicationRequests_Split(t *testing.T) {
	w := newSplitWorld(t)
	w.protectProduction(t, map[string]any{"protected": true, "requiredApprovals": 2})

	direct := w.Do(http.MethodPost, "/environment/publish", w.Admin, w.publishBody(map[string]any{"split": split(w.v2, 70, w.v3, 30)}))
	require.Equal(t, http.StatusConflict, direct.Status, "%s", direct.Body)
	assert.Equal(t, canvas.EAPPROVALREQUIRED, readError(t, direct).Code)

	requester := w.Key(canvas.RoleEditor)
	r := w.Do(http.MethodPost, "/publication-requests", requester, w.requestBody(map[string]any{"split": split(w.v2, 70, w.v3, 30)}))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	req := r.Map(t)
	id := req["id"].(string)
	assert.Equal(t, w.v2, req["versionId"], "the first entry's version")
	assert.Equal(t, split(w.v2, 70.0, w.v3, 30.0), req["split"])
	assert.Equal(t, "/prompt-version/"+w.v2+"/diff?against="+w.v1, req["diffPath"])
	assert.Equal(t, w.v1, req["baseVersionId"])

	// A request of one version says split: null.
	one := w.Do(http.MethodPost, "/publication-requests", requester, w.requestBody(map[string]any{"versionId": w.v3}))
	require.Equal(t, http.StatusCreated, one.Status, "%s", one.Body)
	assert.Contains(t, one.Map(t), "split")
	assert.Nil(t, one.Map(t)["split"])

	// A split whose second version is edited after the request is not
	// approved.
	v4 := w.mustVersion(w.canvasID, "four")
	edited := mustCreate(t, w.testEnv, "/publication-requests", requester, w.requestBody(map[string]any{"split": split(w.v2, 50, v4, 50)}))["id"].(string)
	res := w.Do(http.MethodPatch, "/prompt-version/"+v4, w.Editor, map[string]any{"content": "four, edited"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res = w.Do(http.MethodGet, "/publication-requests/"+edited, w.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.Equal(t, true, res.Map(t)["versionChanged"])
	res = w.Do(http.MethodPost, "/publication-requests/"+edited+"/approve", w.Admin, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	assert.Contains(t, readError(t, res).Message, v4)

	approve := func(token string) map[string]any {
		t.Helper()
		res := w.Do(http.MethodPost, "/publication-requests/"+id+"/approve", token, map[string]any{"comment": "ok"})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return res.Map(t)
	}
	assert.Equal(t, "pending", approve(userJWT(t, w.fullEnv, "ana", canvas.RoleEditor))["status"])
	assert.Equal(t, w.v1, w.readAs("").Map(t)["id"], "one approval of two publishes nothing")
	got := approve(userJWT(t, w.fullEnv, "ben", canvas.RoleEditor))
	assert.Equal(t, "published", got["status"])
	pubID, _ := got["publicationId"].(string)
	require.NotEmpty(t, pubID)

	hist := w.Do(http.MethodGet, "/environment/versions?resourceType=prompt&resourceId="+w.canvasID+"&envName=production", w.Viewer, nil)
	require.Equal(t, http.StatusOK, hist.Status, "%s", hist.Body)
	items := hist.Map(t)["data"].([]any)
	require.Len(t, items, 2)
	active := items[0].(map[string]any)
	assert.Equal(t, pubID, active["publicationId"])
	assert.Equal(t, split(w.v2, 70.0, w.v3, 30.0), active["split"])

	served := map[string]int{}
	for i := range 40 {
		res := w.readAs(fmt.Sprintf("user-%d", i))
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		served[res.Map(t)["id"].(string)]++
	}
	assert.Len(t, served, 2, "both versions of the split are served: %v", served)
	assert.Positive(t, served[w.v2])
	assert.Positive(t, served[w.v3])
	assert.Greater(t, served[w.v2], served[w.v3], "70 percent against 30")

	res = w.Do(http.MethodPost, "/publication-requests", requester, w.requestBody(map[string]any{"split": split(w.v2, 70, w.v3, 30)}))
	assert.Equal(t, http.StatusConflict, res.Status, "production serves the split already: %s", res.Body)
}

// TestPublicationRequests_SplitGate: with a required experiment, a split
// is approved only when every one of its versions passed one.
func TestPublicationRequests_SplitGate(t *testing.T) {
	w := newSplitWorld(t)
	// v2 answers "two", as the test case expects; v3 answers "three";
	// twin is another version that answers "two".
	twin := w.mustVersion(w.canvasID, "two")
	tag := mustCreate(t, w.testEnv, "/test-case-tags", w.Editor, map[string]any{"name": "smoke", "promptId": w.canvasID})["id"].(string)
	tc := mustCreate(t, w.testEnv, "/test-case", w.Editor, map[string]any{"promptId": w.canvasID, "title": "says two",
		"variables": map[string]any{}, "expectedOutput": "two"})["id"].(string)
	res := w.Do(http.MethodPost, "/test-case/bulk-add-tags", w.Editor, map[string]any{"testCaseIds": []string{tc}, "tagIds": []string{tag}})
	require.Less(t, res.Status, 300, "%s", res.Body)
	w.protectProduction(t, map[string]any{"protected": true, "requiredApprovals": 1,
		"requiredExperiment": map[string]any{"tagIds": []string{tag}, "minPassRate": 1}})

	failing := mustCreate(t, w.testEnv, "/publication-requests", w.Editor, w.requestBody(map[string]any{"split": split(w.v2, 50, w.v3, 50)}))["id"].(string)
	passing := mustCreate(t, w.testEnv, "/publication-requests", w.Editor, w.requestBody(map[string]any{"split": split(w.v2, 50, twin, 50)}))["id"].(string)
	approve := func(id string) *testResponse {
		return w.Do(http.MethodPost, "/publication-requests/"+id+"/approve", w.Admin, nil)
	}
	res = approve(passing)
	require.Equal(t, http.StatusConflict, res.Status, "no experiment yet: %s", res.Body)

	res = w.Do(http.MethodPost, "/experiments", w.Editor, map[string]any{"promptId": w.canvasID,
		"versionIds": []string{w.v2, w.v3, twin}, "tagIds": []string{tag},
		"evaluators": []map[string]any{{"name": "exact", "type": "exact"}}})
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	x := res.Map(t)["id"].(string)
	ctx := context.Background()
	jobs, err := w.Engine.Store.ClaimJobs(ctx, "gate", []string{experiment.JobKindRun}, 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, w.Engine.Experiments.HandleJob(ctx, jobs[0]))
	require.NoError(t, w.Engine.Store.CompleteJob(ctx, jobs[0].ID, "gate"))
	res = w.Do(http.MethodGet, "/experiments/"+x, w.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "completed", res.Map(t)["status"], "%s", res.Body)

	res = approve(failing)
	require.Equal(t, http.StatusConflict, res.Status, "v3 fails the test case: %s", res.Body)
	b := readError(t, res)
	assert.Equal(t, canvas.ECONFLICT, b.Code)
	assert.Contains(t, b.Message, w.v3, "the refusal names the version that did not pass")

	res = approve(passing)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.Equal(t, "published", res.Map(t)["status"])
	got := w.readAs("someone")
	require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
	assert.Contains(t, []string{w.v2, twin}, got.Map(t)["id"])
}
