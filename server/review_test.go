package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmaxmax/go-sse"
)

// streamedRunID returns the run id the chunks of a streamed completion
// carry.
func streamedRunID(t *testing.T, r *testResponse) string {
	t.Helper()
	for ev, err := range sse.Read(bytes.NewReader(r.Body), nil) {
		require.NoError(t, err)
		var chunk struct {
			ID string `json:"id"`
		}
		if json.Unmarshal([]byte(ev.Data), &chunk) == nil && chunk.ID != "" {
			return chunk.ID
		}
	}
	t.Fatal("no chunk carries the run id")
	return ""
}

// reviewPage is a page of GET /review-queue.
type reviewPage struct {
	Data []struct {
		ID         string `json:"id"`
		RunID      string `json:"runId"`
		PromptID   string `json:"promptId"`
		VersionID  string `json:"versionId"`
		Status     string `json:"status"`
		Source     string `json:"source"`
		Annotation *struct {
			Passed  bool     `json:"passed"`
			Score   *float64 `json:"score"`
			Comment string   `json:"comment"`
		} `json:"annotation"`
	} `json:"data"`
	Meta struct {
		TotalCount int `json:"totalCount"`
	} `json:"meta"`
}

// reviewRuns returns the run ids of a page, sorted, and the item id of
// each run.
func reviewRuns(p reviewPage) ([]string, map[string]string) {
	var ids []string
	items := map[string]string{}
	for _, it := range p.Data {
		ids = append(ids, it.RunID)
		items[it.RunID] = it.ID
	}
	sort.Strings(ids)
	return ids, items
}

func TestReview_LiveRunsOverHTTP(t *testing.T) {
	e := newFullEnv(t)
	e.RunGenerations(t)
	p1, p2 := mustProjectID(t, e.testEnv, "p1"), mustProjectID(t, e.testEnv, "p2")
	c := mustCreate(t, e.testEnv, "/prompt", e.Editor, map[string]any{"title": "Support", "projectId": p1,
		"inferencesPercentage": "100"})["id"].(string)
	v := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Hello {{name}}"}})["id"].(string)
	publish(t, e.testEnv, c, v)
	app, _ := mustApplication(t, e.testEnv, map[string]any{"name": "shop", "promptId": c})

	complete := func(body map[string]any, want int, headers ...string) *testResponse {
		t.Helper()
		body["canvas_id"] = c
		body["variables"] = map[string]any{"name": "Ada"}
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, body, headers...)
		require.Equal(t, want, r.Status, "%s", r.Body)
		return r
	}
	// Live runs: sync (with messages of its own), streamed, async and
	// through an application.
	syncRun := complete(map[string]any{"messages": []map[string]any{{"role": "user", "content": "How are you?"},
		{"role": "assistant", "content": "Fine."}, {"role": "user", "content": "Bye"}}}, http.StatusOK).Map(t)["id"].(string)
	streamRun := streamedRunID(t, complete(map[string]any{"stream": true}, http.StatusOK))
	asyncRun := complete(map[string]any{"async": true}, http.StatusAccepted).Map(t)["id"].(string)
	appRun := complete(map[string]any{"application_id": app["id"]}, http.StatusOK).Map(t)["id"].(string)
	// Not live: a preview, and a test case's run.
	preview := complete(map[string]any{}, http.StatusOK, "Canvas-Preview", "true").Map(t)["id"].(string)
	tc := mustCreate(t, e.testEnv, "/test-case", e.Editor, map[string]any{"promptId": c,
		"variables": map[string]any{"name": "Grace"}})["id"].(string)
	gen := e.Do(http.MethodPost, "/test-case/"+tc+"/run", e.Editor, map[string]any{"promptVersionId": v})
	require.Equal(t, http.StatusOK, gen.Status, "%s", gen.Body)
	genID := gen.Map(t)["generationId"].(string)
	require.Eventually(t, func() bool {
		r := e.Do(http.MethodGet, "/test-case/generations/"+genID, e.Viewer, nil)
		return r.Status == http.StatusOK && r.Map(t)["status"] == "completed"
	}, 30*time.Second, 20*time.Millisecond)

	var runs struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	r := e.Do(http.MethodGet, "/v2/chat/completions?limit=100&canvasId="+c, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &runs)
	require.Len(t, runs.Data, 6, "every run is recorded, the preview and the test case's too")
	var recorded []string
	for _, run := range runs.Data {
		recorded = append(recorded, run.ID)
	}
	live := []string{syncRun, streamRun, asyncRun, appRun}
	sort.Strings(live)
	assert.Subset(t, recorded, append(live, preview))

	var page reviewPage
	r = e.Do(http.MethodGet, "/review-queue?promptId="+c, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &page)
	queued, items := reviewRuns(page)
	assert.Equal(t, live, queued, "sync, stream, async and application runs are sampled; not the preview or the test case")
	for _, it := range page.Data {
		assert.Equal(t, c, it.PromptID)
		assert.Equal(t, v, it.VersionID)
		assert.Equal(t, "pending", it.Status)
		assert.Equal(t, "sampled", it.Source)
		assert.Nil(t, it.Annotation)
	}

	t.Run("AnnotationValidated", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/annotation", e.Editor, map[string]any{"score": 1.5})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), "/json/passed")
		assert.Contains(t, string(r.Body), "/json/score")
		r = e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/annotation", e.Viewer, map[string]any{"passed": true})
		assert.Equal(t, http.StatusForbidden, r.Status, "viewers read only: %s", r.Body)
		other := e.Key("editor", p2)
		r = e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/annotation", other, map[string]any{"passed": true})
		assert.Equal(t, http.StatusForbidden, r.Status, "another project's key: %s", r.Body)
		r = e.Do(http.MethodGet, "/review-queue?promptId="+c, e.Key("viewer", p2), nil)
		assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue/"+items[asyncRun]+"/annotation", e.Editor, map[string]any{"passed": true})
		assert.Equal(t, http.StatusConflict, r.Status, "the async run has not run: %s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue/7b0e3a8e-8b7e-4c43-9a56-51c1c1b1f0aa/annotation", e.Editor,
			map[string]any{"passed": true})
		assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})

	t.Run("GoodRunMakesTestCaseWithExpectedOutput", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/annotation", e.Editor,
			map[string]any{"passed": false, "comment": "first look"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/annotation", e.Editor,
			map[string]any{"passed": true, "score": 0.8, "comment": "polite"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		it := r.Map(t)
		assert.Equal(t, "reviewed", it["status"])
		assert.Equal(t, map[string]any{"passed": true, "score": 0.8, "comment": "polite", "annotatedBy": it["annotation"].(map[string]any)["annotatedBy"],
			"annotatedAt": it["annotation"].(map[string]any)["annotatedAt"]}, it["annotation"], "the new annotation replaces the old")

		run := e.Do(http.MethodGet, "/v2/chat/completions/"+syncRun, e.Viewer, nil).Map(t)
		assert.Equal(t, map[string]any{"name": "Ada"}, run["variables"], "the run keeps its variables")
		output := run["result"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(map[string]any)["text"]

		r = e.Do(http.MethodPost, "/review-queue/"+items[syncRun]+"/test-case", e.Editor, nil)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		made := r.Map(t)
		assert.Equal(t, c, made["promptId"])
		assert.Equal(t, output, made["expectedOutput"])
		assert.Equal(t, map[string]any{"name": "Ada"}, made["variables"])
		assert.Equal(t, []any{
			map[string]any{"role": "user", "content": "How are you?"},
			map[string]any{"role": "assistant", "content": "Fine."},
			map[string]any{"role": "user", "content": "Bye"},
		}, made["messages"], "the request's own messages, after the version's")
		assert.Equal(t, map[string]any{"source": "review"}, made["metadata"])
		got := e.Do(http.MethodGet, "/test-case/"+made["id"].(string), e.Viewer, nil)
		assert.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
	})

	t.Run("BadRunMakesTestCaseWithoutExpectedOutput", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/review-queue/"+items[appRun]+"/annotation", e.Editor, map[string]any{"passed": false, "score": 0})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue/"+items[appRun]+"/test-case", e.Editor, nil)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		made := r.Map(t)
		assert.Nil(t, made["expectedOutput"])
		assert.Equal(t, []any{}, made["messages"])
		r = e.Do(http.MethodPost, "/review-queue/"+items[appRun]+"/test-case", e.Viewer, nil)
		assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	})

	t.Run("AddByHand", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/review-queue", e.Editor, map[string]any{"runId": preview})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		it := r.Map(t)
		assert.Equal(t, "manual", it["source"])
		assert.Equal(t, "pending", it["status"])
		r = e.Do(http.MethodPost, "/review-queue", e.Editor, map[string]any{"runId": preview})
		assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue", e.Editor, map[string]any{"runId": syncRun})
		assert.Equal(t, http.StatusConflict, r.Status, "a sampled run is queued already: %s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue", e.Editor, map[string]any{"runId": "nope"})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		task := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi"})
		require.Equal(t, http.StatusAccepted, task.Status, "%s", task.Body)
		r = e.Do(http.MethodPost, "/review-queue", e.Editor, map[string]any{"runId": task.Map(t)["id"]})
		assert.Equal(t, http.StatusNotFound, r.Status, "a task is no run of a canvas: %s", r.Body)
		r = e.Do(http.MethodPost, "/review-queue", e.Viewer, map[string]any{"runId": preview})
		assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	})

	t.Run("ListAndStats", func(t *testing.T) {
		var reviewed reviewPage
		r := e.Do(http.MethodGet, "/review-queue?status=reviewed&promptId="+c, e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &reviewed)
		ids, _ := reviewRuns(reviewed)
		want := []string{syncRun, appRun}
		sort.Strings(want)
		assert.Equal(t, want, ids)
		r = e.Do(http.MethodGet, "/review-queue?status=done&limit=101", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), "/query/status")
		assert.Contains(t, string(r.Body), "/query/limit")

		r = e.Do(http.MethodGet, "/review-queue/stats?promptId="+c, e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.JSONEq(t, `{"promptId": "`+c+`", "versions": [{"versionId": "`+v+`", "pending": 3, "reviewed": 2,
			"good": 1, "bad": 1, "meanScore": 0.4}]}`, string(r.Body))
		r = e.Do(http.MethodGet, "/review-queue/stats", e.Viewer, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
}
