package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// splitWorld is a canvas of a full test server with three versions.
type splitWorld struct {
	*includeWorld
	canvasID   string
	v1, v2, v3 string
}

func newSplitWorld(t *testing.T) *splitWorld {
	w := &splitWorld{includeWorld: newIncludeWorld(t)}
	w.canvasID = w.canvas("Split")
	w.v1, w.v2, w.v3 = w.mustVersion(w.canvasID, "one"), w.mustVersion(w.canvasID, "two"), w.mustVersion(w.canvasID, "three")
	return w
}

// publishBody is a publish request of the world's canvas to production.
func (w *splitWorld) publishBody(fields map[string]any) map[string]any {
	body := map[string]any{"resourceType": "prompt", "resourceId": w.canvasID, "envName": "production"}
	for k, v := range fields {
		body[k] = v
	}
	return body
}

func split(pairs ...any) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"versionId": pairs[i], "weight": pairs[i+1]})
	}
	return out
}

// readAs reads production with an assignment key ("" for none).
func (w *splitWorld) readAs(key string, headers ...string) *testResponse {
	q := "/environment/version?resourceType=prompt&resourceId=" + w.canvasID + "&envName=production"
	if key != "" {
		q += "&assignmentKey=" + url.QueryEscape(key)
	}
	return w.Do("GET", q, w.Viewer, nil, headers...)
}

func TestSplit_Publish(t *testing.T) {
	w := newSplitWorld(t)
	other := w.mustVersion(w.canvas("Other"), "other")
	for name, tc := range map[string]struct {
		fields map[string]any
		path   string
	}{
		"Both":        {map[string]any{"versionId": w.v1, "split": split(w.v1, 50, w.v2, 50)}, ""},
		"Neither":     {map[string]any{}, ""},
		"OneEntry":    {map[string]any{"split": split(w.v1, 99)}, "/json/split"},
		"Six":         {map[string]any{"split": split(w.v1, 10, w.v2, 10, w.v3, 20, other, 20, w.v1, 20, w.v2, 20)}, "/json/split"},
		"Weight":      {map[string]any{"split": split(w.v1, 100, w.v2, 0)}, "/json/split/0/weight"},
		"Sum":         {map[string]any{"split": split(w.v1, 60, w.v2, 30)}, "/json/split"},
		"Repeated":    {map[string]any{"split": split(w.v1, 50, w.v1, 50)}, "/json/split/1/versionId"},
		"OtherCanvas": {map[string]any{"split": split(w.v1, 50, other, 50)}, "/json/split/1/versionId"},
	} {
		t.Run(name, func(t *testing.T) {
			res := w.Do("POST", "/environment/publish", w.Editor, w.publishBody(tc.fields))
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
			assert.Equal(t, canvas.EINVALID, res.Code(t))
			if tc.path != "" {
				assert.Contains(t, string(res.Body), `"`+tc.path+`"`)
			}
		})
	}

	res := w.Do("POST", "/environment/publish", w.Viewer, w.publishBody(map[string]any{"split": split(w.v1, 70, w.v2, 30)}))
	assert.Equal(t, http.StatusForbidden, res.Status, "a viewer")

	body := w.publishBody(map[string]any{"split": split(w.v1, 70, w.v2, 30)})
	res = w.Do("POST", "/environment/publish", w.Editor, body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	pub := res.Map(t)
	assert.Equal(t, w.v1, pub["versionId"], "the first entry's version")
	assert.Equal(t, split(w.v1, 70.0, w.v2, 30.0), pub["split"])
	again := w.Do("POST", "/environment/publish", w.Editor, body)
	require.Equal(t, http.StatusOK, again.Status, "the same split: nothing changes")
	assert.Equal(t, pub["publicationId"], again.Map(t)["publicationId"])

	// Ending the split is publishing one version; history records both.
	res = w.Do("POST", "/environment/publish", w.Editor, w.publishBody(map[string]any{"versionId": w.v2}))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	assert.NotContains(t, res.Map(t), "split")
	hist := w.Do("GET", "/environment/versions?resourceType=prompt&resourceId="+w.canvasID+"&envName=production", w.Viewer, nil)
	require.Equal(t, http.StatusOK, hist.Status)
	items := hist.Map(t)["data"].([]any)
	require.Len(t, items, 2)
	assert.NotContains(t, items[0], "split")
	assert.Equal(t, split(w.v1, 70.0, w.v2, 30.0), items[1].(map[string]any)["split"])
}

// TestSplit_AssignmentKey: a key reads and runs the same version of a
// 70/30 split every time, with that version's ETag; a key that is too long
// is 422.
func TestSplit_AssignmentKey(t *testing.T) {
	w := newSplitWorld(t)
	res := w.Do("POST", "/environment/publish", w.Editor, w.publishBody(map[string]any{"split": split(w.v1, 70, w.v2, 30)}))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	pubID := res.Map(t)["publicationId"].(string)

	assigned := map[string]string{} // key → version
	etags := map[string]string{}    // version → ETag
	runs := map[string][]string{}   // version → run ids
	for i := range 60 {
		key := fmt.Sprintf("user-%d", i)
		first := w.readAs(key)
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
		version := first.Map(t)["id"].(string)
		assigned[key] = version
		etag := first.Header.Get("ETag")
		if prev, ok := etags[version]; ok {
			assert.Equal(t, prev, etag, "one ETag per variant")
		}
		etags[version] = etag
		second := w.readAs(key, "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, second.Status, "the same key, the same version")

		if i%6 == 0 {
			c := w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": w.canvasID, "assignment_key": key})
			require.Equal(t, http.StatusOK, c.Status, "%s", c.Body)
			assert.Equal(t, version, c.Map(t)["versionId"], "a completion gets the key's version")
			runs[version] = append(runs[version], c.Map(t)["id"].(string))
		}
	}
	require.Len(t, etags, 2, "both variants were assigned")
	assert.NotEqual(t, etags[w.v1], etags[w.v2], "the ETag differs per variant")
	for version, ids := range runs {
		for _, id := range ids {
			r := w.Do("GET", "/v2/chat/completions/"+id, w.Viewer, nil)
			require.Equal(t, http.StatusOK, r.Status)
			run := r.Map(t)
			assert.Equal(t, version, run["versionId"])
			assert.Equal(t, pubID, run["publicationId"])
			want := 0.0
			if version == w.v2 {
				want = 1
			}
			assert.Equal(t, want, run["variant"])
		}
	}

	// Without a key each read draws.
	drawn := map[string]bool{}
	for range 60 {
		r := w.readAs("")
		require.Equal(t, http.StatusOK, r.Status)
		drawn[r.Map(t)["id"].(string)] = true
	}
	assert.Len(t, drawn, 2)

	res = w.readAs(strings.Repeat("k", 257))
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	assert.Contains(t, string(res.Body), "/query/assignmentKey")
	res = w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": w.canvasID, "assignment_key": strings.Repeat("k", 257)})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	assert.Contains(t, string(res.Body), "/json/assignment_key")
}

// TestSplit_FeedbackAndStats: feedback is recorded once per run and
// updated, shows on the run, and the split's stats add up per variant.
func TestSplit_FeedbackAndStats(t *testing.T) {
	w := newSplitWorld(t)
	res := w.Do("POST", "/environment/publish", w.Editor, w.publishBody(map[string]any{"split": split(w.v1, 50, w.v2, 50)}))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	pubID := res.Map(t)["publicationId"].(string)

	byVariant := map[float64][]string{}
	for i := 0; len(byVariant[0]) < 3 || len(byVariant[1]) < 2; i++ {
		require.Less(t, i, 200)
		c := w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": w.canvasID,
			"environment_name": "production", "assignment_key": fmt.Sprintf("k%d", i)})
		require.Equal(t, http.StatusOK, c.Status, "%s", c.Body)
		id := c.Map(t)["id"].(string)
		run := w.Do("GET", "/v2/chat/completions/"+id, w.Viewer, nil).Map(t)
		v := run["variant"].(float64)
		byVariant[v] = append(byVariant[v], id)
	}

	fb := func(id, token string, body any) *testResponse {
		return w.Do("POST", "/v2/chat/completions/"+id+"/feedback", token, body)
	}
	a, b := byVariant[0][0], byVariant[0][1]
	r := fb(a, w.Editor, map[string]any{"score": 0.2, "comment": "slow"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, 0.2, r.Map(t)["score"])
	r = fb(a, w.Editor, map[string]any{"score": 1})
	require.Equal(t, http.StatusOK, r.Status, "updated: %s", r.Body)
	assert.Equal(t, 1.0, r.Map(t)["score"])
	assert.Nil(t, r.Map(t)["comment"])
	require.Equal(t, http.StatusOK, fb(b, w.Editor, map[string]any{"score": 0.5}).Status)
	require.Equal(t, http.StatusOK, fb(byVariant[1][0], w.Editor, map[string]any{"score": 0}).Status)

	run := w.Do("GET", "/v2/chat/completions/"+a, w.Viewer, nil).Map(t)
	require.Contains(t, run, "feedback")
	assert.Equal(t, 1.0, run["feedback"].(map[string]any)["score"])
	assert.NotContains(t, w.Do("GET", "/v2/chat/completions/"+byVariant[0][2], w.Viewer, nil).Map(t), "feedback")

	assert.Equal(t, http.StatusForbidden, fb(a, w.Viewer, map[string]any{"score": 1}).Status, "a viewer")
	for _, score := range []any{1.5, -0.1, "good"} {
		r := fb(a, w.Editor, map[string]any{"score": score})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "score %v: %s", score, r.Body)
	}
	assert.Equal(t, http.StatusUnprocessableEntity, fb(a, w.Editor, map[string]any{}).Status, "no score")
	otherWS := &canvas.Workspace{Name: "other"}
	require.NoError(t, w.Store.CreateWorkspace(context.Background(), otherWS))
	assert.Equal(t, http.StatusNotFound, fb(a, w.KeyIn(otherWS.ID, canvas.RoleAdmin), map[string]any{"score": 1}).Status)
	assert.Equal(t, http.StatusNotFound, fb("11111111-1111-4111-8111-111111111111", w.Editor, map[string]any{"score": 1}).Status)

	statsPath := "/environment/split-stats?resourceType=prompt&resourceId=" + w.canvasID + "&envName=production"
	r = w.Do("GET", statsPath, w.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var stats struct {
		PublicationID string
		IsActive      bool
		Variants      []struct {
			Variant, Runs, Errors, FeedbackCount, Weight int
			VersionID                                    string
			FeedbackMean                                 *float64
			LatencyP50Ms                                 *int64
		}
	}
	r.JSON(t, &stats)
	assert.Equal(t, pubID, stats.PublicationID)
	assert.True(t, stats.IsActive)
	require.Len(t, stats.Variants, 2)
	for i, v := range stats.Variants {
		assert.Equal(t, i, v.Variant)
		assert.Equal(t, len(byVariant[float64(i)]), v.Runs, "variant %d", i)
		assert.Equal(t, 0, v.Errors)
		assert.Equal(t, 50, v.Weight)
		assert.NotNil(t, v.LatencyP50Ms)
	}
	assert.Equal(t, w.v1, stats.Variants[0].VersionID)
	assert.Equal(t, 2, stats.Variants[0].FeedbackCount)
	require.NotNil(t, stats.Variants[0].FeedbackMean)
	assert.InDelta(t, 0.75, *stats.Variants[0].FeedbackMean, 1e-9)
	assert.Equal(t, 1, stats.Variants[1].FeedbackCount)

	// After the split ends, its stats are read by publicationId.
	res = w.Do("POST", "/environment/publish", w.Editor, w.publishBody(map[string]any{"versionId": w.v3}))
	require.Equal(t, http.StatusCreated, res.Status)
	r = w.Do("GET", statsPath, w.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	r.JSON(t, &stats)
	require.Len(t, stats.Variants, 1, "the single version now published")
	assert.Equal(t, 0, stats.Variants[0].Runs)
	r = w.Do("GET", statsPath+"&publicationId="+pubID, w.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	r.JSON(t, &stats)
	assert.False(t, stats.IsActive)
	assert.Len(t, stats.Variants, 2)
	assert.Equal(t, http.StatusNotFound, w.Do("GET", statsPath+"&publicationId=11111111-1111-4111-8111-111111111111", w.Viewer, nil).Status)
	assert.Equal(t, http.StatusNotFound, w.Do("GET", statsPath, w.KeyIn(otherWS.ID, canvas.RoleAdmin), nil).Status)
}

// TestSplit_Watch: a watch with an assignment key follows the key's
// version of a split, with its ETag; one without follows the split as a
// whole, reporting its first entry.
func TestSplit_Watch(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 3)
	v1, v2, v3 := ec.Versions[0].ID, ec.Versions[1].ID, ec.Versions[2].ID
	publish := func(fields map[string]any) map[string]any {
		body := map[string]any{"resourceType": "prompt", "resourceId": ec.Canvas.ID, "envName": "production"}
		for k, v := range fields {
			body[k] = v
		}
		res := e.Do("POST", "/environment/publish", e.Editor, body)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return res.Map(t)
	}
	pub := publish(map[string]any{"split": split(v1, 50, v2, 50)})
	keyedPath := "/environment/version?" + ec.target("production") + "&assignmentKey=user-7"
	keyed := e.Do("GET", keyedPath, e.Viewer, nil)
	require.Equal(t, http.StatusOK, keyed.Status)
	keyedVersion := keyed.Map(t)["id"].(string)

	whole := openWatch(t, ec, e.Viewer, "", "production")
	ev := whole.next(t)
	assert.Equal(t, v1, ev.VersionID, "the split's first entry")
	assert.Equal(t, pub["publicationId"], ev.PublicationID)
	again := openWatch(t, ec, e.Viewer, "", "production")
	assert.Equal(t, ev.ETag, again.next(t).ETag, "the tag of a whole split is stable")

	mine := openWatch(t, ec, e.Viewer, "", "production&assignmentKey=user-7")
	ev = mine.next(t)
	assert.Equal(t, keyedVersion, ev.VersionID)
	assert.Equal(t, keyed.Header.Get("ETag"), ev.ETag, "the key's version and its tag")

	// A new split is a change for both. It leaves out the key's version,
	// so that the key's is another too: a split that kept it could assign
	// the key the same version again, which changes nothing for it.
	other := v1
	if keyedVersion == v1 {
		other = v2
	}
	publish(map[string]any{"split": split(v3, 50, other, 50)})
	ev = whole.next(t)
	assert.Equal(t, v3, ev.VersionID)
	ev = mine.next(t)
	assert.Equal(t, mustTagged(t, e, keyedPath), ev.ETag)
}
