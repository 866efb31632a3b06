package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slow is a rate so low that no token comes back while a test runs: only
// the burst counts, and nothing depends on timing.
const slow = 0.0001

// limitedResponse is what rawDo returns.
type limitedResponse struct {
	Status     int
	Code       string
	RetryAfter string
	Body       []byte
}

// rawDo sends a request without the OpenAPI check of testEnv.Do: a 429 is
// not part of the operations' documents.
func rawDo(t *testing.T, url, method, path, token string, body any) limitedResponse {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, url+path, bytes.NewReader(raw))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := limitedResponse{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: b}
	if resp.StatusCode >= 400 {
		var e struct{ Code string }
		require.NoError(t, json.Unmarshal(b, &e), "%s", b)
		out.Code = e.Code
	}
	return out
}

// requireLimited checks a 429 RATE_LIMITED with a Retry-After of whole
// seconds, at least 1.
func requireLimited(t *testing.T, r limitedResponse) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	assert.Equal(t, canvas.ERATELIMITED, r.Code)
	secs, err := strconv.Atoi(r.RetryAfter)
	require.NoError(t, err, "Retry-After %q", r.RetryAfter)
	assert.GreaterOrEqual(t, secs, 1)
}

func withLimits(l server.Limits) envOption {
	return func(_ testing.TB, _ *sqlite.DB, o *server.Options) { o.Limits = l }
}

func TestLimits_PerKey(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withLimits(server.Limits{PerKey: slow, PerKeyBurst: 3}))
	for i := range 3 {
		r := rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil)
		require.Equal(t, http.StatusOK, r.Status, "request %d within the burst: %s", i, r.Body)
	}
	requireLimited(t, rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil))
	requireLimited(t, rawDo(t, e.URL, http.MethodPost, "/projects", e.Editor, map[string]any{"name": "p"}))
	assert.Equal(t, http.StatusOK, rawDo(t, e.URL, http.MethodGet, "/projects", e.Viewer, nil).Status,
		"another key has its own limit")
	assert.Equal(t, http.StatusOK, rawDo(t, e.URL, http.MethodGet, "/healthz", "", nil).Status,
		"unauthenticated routes are not a key's")
}

func TestLimits_FailedAuthPerAddress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, withLimits(server.Limits{FailedAuthPerAddr: slow, FailedAuthBurst: 2}))
	require.Equal(t, http.StatusOK, rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil).Status,
		"successful authentications spend nothing")
	for range 2 {
		r := rawDo(t, e.URL, http.MethodGet, "/projects", "f2b0c7de-5bd1-4b8f-9a4e-9d0c1e2f3a4b", nil)
		require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
	}
	requireLimited(t, rawDo(t, e.URL, http.MethodGet, "/projects", "not-a-jwt", nil))
	requireLimited(t, rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil))
}

func TestLimits_Off(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	for range 50 {
		require.Equal(t, http.StatusUnauthorized, rawDo(t, e.URL, http.MethodGet, "/projects", "bad", nil).Status)
	}
	require.Equal(t, http.StatusOK, rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil).Status,
		"the zero Limits limits nothing")
}

// TestLimits_QueuedPerWorkspace shows that a workspace cannot grow the
// queue without bound: with no worker running, its queued runs reach the
// bound and further model work is refused, in that workspace only, until
// the worker has taken some.
func TestLimits_QueuedPerWorkspace(t *testing.T) {
	t.Parallel()
	ce, start := newModelWorkEnv(t, server.Limits{MaxQueuedPerWorkspace: 2}, nil)
	ec := mustEnvCanvas(t, ce, 1)
	ec.mustPublish(t, "production", 1)
	task := map[string]any{"prompt": "Hello"}
	async := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}, "async": true}

	for range 2 {
		r := rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	}
	requireLimited(t, rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task))
	requireLimited(t, rawDo(t, ce.URL, http.MethodPost, completionsPath, ce.Editor, async))
	// Model work is refused before its body is validated, so that refusing
	// costs little.
	requireLimited(t, rawDo(t, ce.URL, http.MethodPost, completionsPath, ce.Editor,
		map[string]any{"canvas_id": ec.Canvas.ID, "async": true, "temperature": "hot", "variables": 7}))
	sync := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}}
	r := rawDo(t, ce.URL, http.MethodPost, completionsPath, ce.Editor, sync)
	assert.Equal(t, http.StatusOK, r.Status, "a synchronous completion queues nothing: %s", r.Body)
	n, err := ce.Store.CountQueuedJobs(context.Background(), ce.Workspace.ID,
		[]string{completion.JobKindCompletion, completion.JobKindTask})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "refused work was not queued")

	other := mustWorkspace(t, ce, "other")
	assert.Equal(t, http.StatusAccepted,
		rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.KeyIn(other, canvas.RoleEditor), task).Status,
		"another workspace has its own bound")
	assert.Equal(t, http.StatusOK, rawDo(t, ce.URL, http.MethodGet, "/projects", ce.Editor, nil).Status,
		"other routes are not refused")

	start()
	require.Eventually(t, func() bool {
		n, err := ce.Store.CountQueuedJobs(context.Background(), ce.Workspace.ID, []string{completion.JobKindTask})
		return err == nil && n == 0
	}, 20*time.Second, 10*time.Millisecond, "the worker takes the queued tasks")
	r = rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task)
	assert.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
}

// TestLimits_QueueDelay shows that the server pushes back once it is not
// keeping up: with no worker running, as soon as queued model work has
// waited longer than MaxQueueDelay, new model work is refused in every
// workspace, other routes are not, and once the worker has taken the
// queue, model work is accepted again. The store's clock runs a minute
// behind, so that a job is a minute old when it is queued and no test
// step waits for it to age.
func TestLimits_QueueDelay(t *testing.T) {
	t.Parallel()
	ce, start := newModelWorkEnv(t, server.Limits{MaxQueueDelay: time.Second}, func(db *sqlite.DB) {
		db.Now = func() time.Time { return time.Now().Add(-time.Minute) }
	})
	ec := mustEnvCanvas(t, ce, 1)
	ec.mustPublish(t, "production", 1)
	task := map[string]any{"prompt": "Hello"}
	async := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}, "async": true}

	r := rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task)
	require.Equal(t, http.StatusAccepted, r.Status, "nothing waits yet: %s", r.Body)
	// The first reading of the queue serves the next checks for a moment.
	var refused limitedResponse
	require.Eventually(t, func() bool {
		refused = rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task)
		return refused.Status == http.StatusTooManyRequests
	}, 20*time.Second, 10*time.Millisecond, "model work is refused once queued work waited too long")
	requireLimited(t, refused)
	requireLimited(t, rawDo(t, ce.URL, http.MethodPost, completionsPath, ce.Editor, async))
	other := mustWorkspace(t, ce, "other")
	requireLimited(t, rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.KeyIn(other, canvas.RoleEditor), task))
	assert.Equal(t, http.StatusOK, rawDo(t, ce.URL, http.MethodGet, "/projects", ce.Editor, nil).Status,
		"other routes are not refused")

	start()
	require.Eventually(t, func() bool {
		return rawDo(t, ce.URL, http.MethodPost, "/v1/tasks", ce.Editor, task).Status == http.StatusAccepted
	}, 20*time.Second, 20*time.Millisecond, "model work is accepted again once the worker took the queue")
}

// newModelWorkEnv starts a server over an engine, as canvasd builds it,
// with limits and one slot of model work; adjust, when set, changes the
// store before the engine opens it. The engine's background work runs only
// once start is called, so that its queue fills meanwhile.
func newModelWorkEnv(t *testing.T, limits server.Limits, adjust func(db *sqlite.DB)) (te *testEnv, start func()) {
	t.Helper()
	var e *engine.Engine
	te = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		if adjust != nil {
			adjust(db)
		}
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		e, err = engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs,
			Limits: engine.Limits{ModelConcurrency: 1}})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, e.Close()) })
		o.Engine, o.Limits = e, limits
	})
	return te, func() {
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()
		t.Cleanup(func() {
			require.NoError(t, e.Close())
			require.NoError(t, <-done)
		})
	}
}

// TestLimits_ServedVersionUnmetered shows the rule that keeps the hot read
// path open: reads of the version an environment serves, plain or
// conditional (304), do not spend the key's rate, while the same key's
// other requests, writes and model work are refused past its burst.
func TestLimits_ServedVersionUnmetered(t *testing.T) {
	t.Parallel()
	const burst = 10
	e := newTestEnv(t, withLimits(server.Limits{PerKey: slow, PerKeyBurst: burst}))
	ec := mustEnvCanvas(t, e, 1)
	ec.mustPublish(t, "production", 1) // the Editor's first request
	path := "/environment/version?" + ec.target("production")

	get := func(etag string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.Editor)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag")
	}
	status, etag := get("")
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, etag)
	for i := range 10 * burst {
		status, _ := get("")
		require.Equal(t, http.StatusOK, status, "read %d", i)
		status, _ = get(etag)
		require.Equal(t, http.StatusNotModified, status, "conditional read %d", i)
	}

	draft := map[string]any{"title": "draft", "projectId": ec.Project.ID}
	for i := range burst - 1 {
		r := rawDo(t, e.URL, http.MethodPost, "/prompt", e.Editor, draft)
		require.Equal(t, http.StatusCreated, r.Status, "write %d within the burst: %s", i, r.Body)
	}
	requireLimited(t, rawDo(t, e.URL, http.MethodPost, "/prompt", e.Editor, draft))
	requireLimited(t, rawDo(t, e.URL, http.MethodGet, "/projects", e.Editor, nil))
	requireLimited(t, rawDo(t, e.URL, http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hello"}))
	status, _ = get(etag)
	assert.Equal(t, http.StatusNotModified, status, "the served version is still read once the key is limited")
}
