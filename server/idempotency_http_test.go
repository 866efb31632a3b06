package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingProvider counts the model calls of the provider it wraps.
type countingProvider struct {
	model.Provider
	calls atomic.Int64
}

func (p *countingProvider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	p.calls.Add(1)
	return p.Provider.Complete(ctx, req)
}

func (p *countingProvider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	p.calls.Add(1)
	return p.Provider.Stream(ctx, req, emit)
}

// idempotencyEnv is a completion server whose echo model counts its calls
// and whose store clock the test moves.
type idempotencyEnv struct {
	*completionEnv
	echo *countingProvider
	now  atomic.Pointer[time.Time]
}

func newIdempotencyEnv(t *testing.T) *idempotencyEnv {
	t.Helper()
	ie := &idempotencyEnv{echo: &countingProvider{Provider: model.NewEcho(model.EchoOptions{})}}
	start := time.Now().UTC()
	ie.now.Store(&start)
	ce := &completionEnv{Providers: model.NewRegistry(ie.echo)}
	ce.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		db.Now = func() time.Time { return *ie.now.Load() }
		o.Idempotency = idempotency.NewService(idempotency.Options{Store: db, Now: db.Now})
		ce.Service = completion.NewService(completion.Options{Store: db, Canvases: db,
			Environments: o.Environments, Models: model.NewCaller(model.Options{Providers: ce.Providers}), Notify: ce.notify})
		o.Completions = ce.Service
	})
	ie.completionEnv = ce
	return ie
}

// advance moves the store's clock forward by d.
func (ie *idempotencyEnv) advance(d time.Duration) {
	next := ie.now.Load().Add(d)
	ie.now.Store(&next)
}

func TestCompletion_Idempotency(t *testing.T) {
	t.Parallel()
	e := newIdempotencyEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	body := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}}
	key := func(k string) []string { return []string{idempotency.Header, k} }

	t.Run("SyncReplayed", func(t *testing.T) {
		before := e.echo.calls.Load()
		first := e.Do(http.MethodPost, completionsPath, e.Editor, body, key("sync-1")...)
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
		again := e.Do(http.MethodPost, completionsPath, e.Editor, body, key("sync-1")...)
		require.Equal(t, http.StatusOK, again.Status, "%s", again.Body)
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, first.Map(t)["id"], again.Map(t)["id"])
		assert.JSONEq(t, string(first.Body), string(again.Body))
		assert.Equal(t, before+1, e.echo.calls.Load(), "the model ran once")
	})
	t.Run("AsyncSameID", func(t *testing.T) {
		async := merged(body, map[string]any{"async": true})
		first := e.Do(http.MethodPost, completionsPath, e.Editor, async, key("async-1")...)
		require.Equal(t, http.StatusAccepted, first.Status, "%s", first.Body)
		again := e.Do(http.MethodPost, completionsPath, e.Editor, async, key("async-1")...)
		require.Equal(t, http.StatusAccepted, again.Status, "%s", again.Body)
		assert.Equal(t, first.Map(t)["id"], again.Map(t)["id"])
		without := e.Do(http.MethodPost, completionsPath, e.Editor, async)
		assert.NotEqual(t, first.Map(t)["id"], without.Map(t)["id"], "without a key every request runs")
	})
	t.Run("DifferentBodyConflict", func(t *testing.T) {
		require.Equal(t, http.StatusOK, e.Do(http.MethodPost, completionsPath, e.Editor, body, key("k-body")...).Status)
		other := merged(body, map[string]any{"variables": map[string]any{"name": "Bob"}})
		r := e.Do(http.MethodPost, completionsPath, e.Editor, other, key("k-body")...)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, r.Code(t))
	})
	t.Run("WorkspacesIndependent", func(t *testing.T) {
		other := mustWorkspace(t, e.testEnv, "other")
		a := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "hi"}, key("shared")...)
		b := e.Do(http.MethodPost, "/v1/tasks", e.KeyIn(other, canvas.RoleEditor), map[string]any{"prompt": "hi"}, key("shared")...)
		require.Equal(t, http.StatusAccepted, a.Status, "%s", a.Body)
		require.Equal(t, http.StatusAccepted, b.Status, "%s", b.Body)
		assert.NotEqual(t, a.Map(t)["id"], b.Map(t)["id"])
		assert.Empty(t, b.Header.Get("Idempotent-Replayed"))
	})
	t.Run("ValidationErrorReplayed", func(t *testing.T) {
		bad := merged(body, map[string]any{"variables": map[string]any{}})
		first := e.Do(http.MethodPost, completionsPath, e.Editor, bad, key("k-422")...)
		require.Equal(t, http.StatusUnprocessableEntity, first.Status, "%s", first.Body)
		again := e.Do(http.MethodPost, completionsPath, e.Editor, bad, key("k-422")...)
		assert.Equal(t, http.StatusUnprocessableEntity, again.Status)
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	})
	t.Run("ForbiddenNotKept", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Viewer, map[string]any{"prompt": "hi"}, key("k-403")...)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "hi"}, key("k-403")...)
		assert.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	})
	t.Run("StreamRunsAgain", func(t *testing.T) {
		stream := merged(body, map[string]any{"stream": true})
		before := e.echo.calls.Load()
		for range 2 {
			r := e.Do(http.MethodPost, completionsPath, e.Editor, stream, key("k-stream")...)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			assert.Contains(t, r.Header.Get("Content-Type"), "text/event-stream")
		}
		assert.Equal(t, before+2, e.echo.calls.Load(), "a stream is not replayed")
	})
	t.Run("InvalidKey", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "hi"}, key(strings.Repeat("k", idempotency.MaxKeyLength+1))...)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EINVALID, r.Code(t))
	})
}

func TestTask_IdempotencyExpires(t *testing.T) {
	t.Parallel()
	e := newIdempotencyEnv(t)
	task := map[string]any{"prompt": "Hello"}
	first := e.Do(http.MethodPost, "/v1/tasks", e.Editor, task, idempotency.Header, "daily")
	require.Equal(t, http.StatusAccepted, first.Status, "%s", first.Body)
	e.advance(idempotency.TTL - time.Minute)
	again := e.Do(http.MethodPost, "/v1/tasks", e.Editor, task, idempotency.Header, "daily")
	assert.Equal(t, first.Map(t)["id"], again.Map(t)["id"], "within 24 hours: the first answer")
	e.advance(time.Minute)
	later := e.Do(http.MethodPost, "/v1/tasks", e.Editor, task, idempotency.Header, "daily")
	require.Equal(t, http.StatusAccepted, later.Status, "%s", later.Body)
	assert.NotEqual(t, first.Map(t)["id"], later.Map(t)["id"], "after 24 hours the key runs again")
	assert.Empty(t, later.Header.Get("Idempotent-Replayed"))
}
