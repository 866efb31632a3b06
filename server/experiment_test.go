package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/webhook"
)

// TestExperiments_HTTP runs an experiment over two versions through the
// API: started 202, run by its job, read with totals, results and a
// compare, its end reported as experiment.completed.
func TestExperiments_HTTP(t *testing.T) {
	t.Parallel()
	e := newFullEnv(t)
	w := newWorld(t, e)
	other := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": w.Canvas,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Hi {{name}}"}})["id"].(string)
	expected := "Hello Ada"
	mustCreate(t, e.testEnv, "/test-case", e.Editor, map[string]any{"promptId": w.Canvas, "title": "graded",
		"variables": map[string]any{"name": "Ada"}, "expectedOutput": expected})

	r := e.Do(http.MethodPost, "/experiments", e.Editor, map[string]any{"promptId": w.Canvas,
		"versionIds": []string{w.Version, other}, "repetitions": 2,
		"evaluators": []map[string]any{{"name": "exact", "type": "exact"}, {"id": w.Evaluator},
			{"name": "alike", "type": "similarity", "threshold": 0.5}}})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	started := r.Map(t)
	assert.Equal(t, "queued", started["status"])
	id := started["id"].(string)
	w.runExperiments(t)

	r = e.Do(http.MethodGet, "/experiments/"+id, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var x struct {
		Status   string
		Progress struct{ Done, Total int }
		Versions []struct {
			VersionID string
			Totals    struct {
				Cases, Passed, Failed, Errored int
				Scores                         map[string]float64
			}
		}
	}
	r.JSON(t, &x)
	assert.Equal(t, "completed", x.Status)
	assert.Equal(t, 8, x.Progress.Total, "2 test cases × 2 versions × 2 repetitions")
	assert.Equal(t, 8, x.Progress.Done)
	require.Len(t, x.Versions, 2)
	// The canvas's messages end with "second" (the world's message): the
	// echo answers "Hello Ada\nsecond", which passes neither exact nor
	// contains "polite".
	for _, v := range x.Versions {
		assert.Equal(t, 4, v.Totals.Cases)
		assert.Equal(t, 4, v.Totals.Failed+v.Totals.Errored+v.Totals.Passed)
		assert.Contains(t, v.Totals.Scores, "exact")
		assert.Contains(t, v.Totals.Scores, "polite")
	}

	r = e.Do(http.MethodGet, "/experiments/"+id+"/compare?baseline="+w.Version+"&candidate="+other, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var cmp struct {
		Regressions, Improvements, Unchanged int
		Cases                                []json.RawMessage
	}
	r.JSON(t, &cmp)
	assert.Len(t, cmp.Cases, 4)
	assert.Equal(t, 4, cmp.Regressions+cmp.Improvements+cmp.Unchanged)

	r = e.Do(http.MethodGet, "/experiments/"+id+"/results?limit=3", e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var page struct {
		Data []map[string]any
		Meta struct{ TotalCount int }
	}
	r.JSON(t, &page)
	assert.Len(t, page.Data, 3)
	assert.Equal(t, 8, page.Meta.TotalCount)
	assert.NotEmpty(t, page.Data[0]["runId"], "each result links its run")

	r = e.Do(http.MethodGet, "/experiments?promptId="+w.Canvas, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	r = e.Do(http.MethodGet, "/experiments/"+id+"/compare?baseline=nope&candidate="+other, e.Viewer, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status)
	r = e.Do(http.MethodPost, "/experiments/"+id+"/cancel", e.Editor, nil)
	assert.Equal(t, http.StatusConflict, r.Status, "an experiment that has ended is not cancelled")
	r = e.Do(http.MethodPost, "/experiments/"+id+"/cancel", e.Viewer, nil)
	assert.Equal(t, http.StatusForbidden, r.Status, "a viewer does not cancel")

	// The end is reported to the canvas's applications, in the
	// transaction that ended the experiment.
	jobs, err := e.Engine.Store.ClaimJobs(context.Background(), "t", []string{webhook.JobKindCanvasEvent}, 100, time.Minute)
	require.NoError(t, err)
	found := false
	for _, j := range jobs {
		var ev webhook.CanvasEvent
		require.NoError(t, json.Unmarshal(j.Payload, &ev))
		if ev.Type == webhook.EventExperimentCompleted && j.RefID == id {
			found = true
			assert.Contains(t, string(ev.Data), `"totals"`)
			assert.NotContains(t, string(ev.Data), "whsec_")
		}
	}
	assert.True(t, found, "experiment.completed is queued")
}

// TestExperiments_Validation checks that a bad start is 422 listing every
// problem with its pointer, and unknown ids 404.
func TestExperiments_Validation(t *testing.T) {
	t.Parallel()
	e := newFullEnv(t)
	w := newWorld(t, e)
	for name, c := range map[string]struct {
		body  map[string]any
		want  int
		paths []string
	}{
		"NoVersions": {map[string]any{"promptId": w.Canvas, "evaluators": []map[string]any{{"name": "e", "type": "exact"}}},
			422, []string{"/json/versionIds"}},
		"BothVersionsAndEnvironments": {map[string]any{"promptId": w.Canvas, "versionIds": []string{w.Version},
			"environments": []string{"production"}, "evaluators": []map[string]any{{"name": "e", "type": "exact"}}},
			422, []string{"/json/environments"}},
		"EvaluatorFields": {map[string]any{"promptId": w.Canvas, "versionIds": []string{w.Version},
			"evaluators": []map[string]any{{"name": "r", "type": "regex", "pattern": "("},
				{"name": "j", "type": "llm-judge", "model": "gpt-4o"},
				{"name": "h", "type": "webhook", "url": "https://example.com/x"},
				{"name": "s", "type": "exact", "threshold": 0.5}}},
			422, []string{"/json/evaluators/0/pattern", "/json/evaluators/1/rubric", "/json/evaluators/2/secret",
				"/json/evaluators/3/threshold"}},
		"DuplicateNames": {map[string]any{"promptId": w.Canvas, "versionIds": []string{w.Version},
			"evaluators": []map[string]any{{"name": "e", "type": "exact"}, {"name": "e", "type": "contains"}}},
			422, []string{"/json/evaluators/1/name"}},
		"UnknownVersion": {map[string]any{"promptId": w.Canvas, "versionIds": []string{"00000000-0000-4000-8000-000000000000"},
			"evaluators": []map[string]any{{"name": "e", "type": "exact"}}}, 404, nil},
		"UnknownSavedEvaluator": {map[string]any{"promptId": w.Canvas, "versionIds": []string{w.Version},
			"evaluators": []map[string]any{{"id": "00000000-0000-4000-8000-000000000000"}}}, 404, nil},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.Do(http.MethodPost, "/experiments", e.Editor, c.body)
			require.Equal(t, c.want, r.Status, "%s", r.Body)
			var body struct {
				Details []struct{ Path string }
			}
			r.JSON(t, &body)
			var paths []string
			for _, d := range body.Details {
				paths = append(paths, d.Path)
			}
			for _, p := range c.paths {
				assert.Contains(t, paths, p)
			}
		})
	}
	r := e.Do(http.MethodPost, "/evaluators", e.Editor, map[string]any{"promptId": w.Canvas, "name": "polite",
		"type": "exact"})
	assert.Equal(t, http.StatusConflict, r.Status, "a canvas names its evaluators once")
	r = e.Do(http.MethodPost, "/evaluators", e.Editor, map[string]any{"promptId": w.Canvas, "name": "hooked",
		"type": "webhook", "url": "https://example.com/judge"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	assert.Regexp(t, "^whsec_", r.Map(t)["secret"], "a new secret is shown once")
	r = e.Do(http.MethodGet, "/evaluators?promptId="+w.Canvas, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.NotContains(t, string(r.Body), "whsec_", "a list shows no secret")
	assert.NotContains(t, string(r.Body), `"sealed"`, "nor the sealed one")
}
