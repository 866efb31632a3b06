package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadProcess stands for a server process that was killed while it held
// Idempotency-Keys: it reserved keys in its own name, in the shared store,
// and may have committed a request's work before it died.
type deadProcess struct {
	t  *testing.T
	ie *idempotencyEnv
	id string
}

// newDeadProcess registers a process whose lease is live now; the test
// lets it lapse by moving the store's clock (lapse).
func newDeadProcess(t *testing.T, ie *idempotencyEnv) *deadProcess {
	d := &deadProcess{t: t, ie: ie, id: "killed-boot-" + t.Name()}
	require.NoError(t, ie.Store.RenewIdempotencyOwner(context.Background(), d.id, idempotency.DefaultOwnerLease))
	return d
}

// reserve reserves key for the request (method POST, path, body) as the
// dead process did before it died, and returns the context its work ran
// with: the editor's principal and the reservation.
func (d *deadProcess) reserve(key, path string, body any) context.Context {
	d.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(d.t, err)
	rec := &idempotency.Record{WorkspaceID: d.ie.Workspace.ID, Key: key,
		RequestHash: idempotency.Hash(http.MethodPost, path, raw)}
	existing, err := d.ie.Store.ReserveIdempotencyKey(context.Background(), rec,
		idempotency.Reservation{TTL: idempotency.TTL, Abandoned: idempotency.Abandoned, Owner: d.id})
	require.NoError(d.t, err)
	require.Nil(d.t, existing)
	ctx := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: d.ie.Workspace.ID,
		KeyID: "dead-process-key", Role: canvas.RoleEditor})
	return idempotency.NewContext(ctx, rec)
}

// lapse moves the store's clock past the dead process's lease.
func (d *deadProcess) lapse() { d.ie.advance(idempotency.DefaultOwnerLease) }

// TestIdempotency_KilledHolder shows that a key reserved by a process that
// was killed is not stranded: a retry is 409 while the holder's lease could
// still be live, then runs, or answers from the work the dead process had
// committed, once the lease has lapsed.
func TestIdempotency_KilledHolder(t *testing.T) {
	t.Parallel()
	ie := newIdempotencyEnv(t)
	ec := mustEnvCanvas(t, ie.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	completionBody := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}}
	task := map[string]any{"prompt": "Hello"}
	key := func(k string) []string { return []string{idempotency.Header, k} }

	t.Run("NoWorkRunsAgain", func(t *testing.T) {
		d := newDeadProcess(t, ie)
		d.reserve("k-none", "/v1/tasks", task)
		r := ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-none")...)
		require.Equal(t, http.StatusConflict, r.Status, "within the lease the holder may be alive: %s", r.Body)
		assert.Equal(t, "15", r.Header.Get("Retry-After"), "the holder's whole lease is left")
		ie.advance(10*time.Second + time.Millisecond)
		r = ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-none")...)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, "5", r.Header.Get("Retry-After"), "what is left of the lease, in whole seconds rounded up")
		d.lapse()
		r = ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-none")...)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		assert.Empty(t, r.Header.Get("Idempotent-Replayed"), "the request ran")
		again := ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-none")...)
		assert.Equal(t, r.Map(t)["id"], again.Map(t)["id"], "the new answer is kept")
	})

	t.Run("TaskCommittedAnswered", func(t *testing.T) {
		d := newDeadProcess(t, ie)
		ctx := d.reserve("k-task", "/v1/tasks", task)
		run, err := ie.Service.RunTask(ctx, completion.TaskParams{Prompt: "Hello"})
		require.NoError(t, err)
		d.lapse()
		r := ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-task")...)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, run.ID, r.Map(t)["id"], "the dead process's task is the answer")
		assert.Equal(t, completion.StatusQueued, r.Map(t)["status"])
		again := ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, task, key("k-task")...)
		assert.JSONEq(t, string(r.Body), string(again.Body), "the rebuilt answer is kept")
	})

	t.Run("AsyncCompletionCommittedAnswered", func(t *testing.T) {
		async := merged(completionBody, map[string]any{"async": true})
		d := newDeadProcess(t, ie)
		ctx := d.reserve("k-async", completionsPath, async)
		run, err := ie.Service.Run(ctx, completion.RunParams{CanvasID: ec.Canvas.ID,
			Variables: map[string]any{"name": "Ada"}, Async: true})
		require.NoError(t, err)
		d.lapse()
		r := ie.Do(http.MethodPost, completionsPath, ie.Editor, async, key("k-async")...)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, map[string]any{"id": run.ID, "object": completion.AsyncObject, "status": completion.StatusQueued}, r.Map(t))
	})

	t.Run("SyncCompletionCommittedAnswered", func(t *testing.T) {
		d := newDeadProcess(t, ie)
		ctx := d.reserve("k-sync", completionsPath, completionBody)
		run, err := ie.Service.Run(ctx, completion.RunParams{CanvasID: ec.Canvas.ID,
			Variables: map[string]any{"name": "Ada"}})
		require.NoError(t, err)
		calls := ie.echo.calls.Load()
		d.lapse()
		r := ie.Do(http.MethodPost, completionsPath, ie.Editor, completionBody, key("k-sync")...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
		want, err := json.Marshal(run.Result)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(r.Body), "the recorded result is the answer")
		assert.Equal(t, calls, ie.echo.calls.Load(), "the model did not run again")
	})

	t.Run("StreamCommittedRunsAgain", func(t *testing.T) {
		stream := merged(completionBody, map[string]any{"stream": true})
		d := newDeadProcess(t, ie)
		ctx := d.reserve("k-stream", completionsPath, stream)
		_, err := ie.Service.Run(ctx, completion.RunParams{CanvasID: ec.Canvas.ID,
			Variables: map[string]any{"name": "Ada"}, Stream: func(model.Chunk) error { return nil }})
		require.NoError(t, err)
		calls := ie.echo.calls.Load()
		d.lapse()
		r := ie.Do(http.MethodPost, completionsPath, ie.Editor, stream, key("k-stream")...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Contains(t, r.Header.Get("Content-Type"), "text/event-stream")
		assert.Equal(t, calls+1, ie.echo.calls.Load(), "a stream is never replayed: it runs again, as any retry of one")
	})

	t.Run("DifferentRequestConflict", func(t *testing.T) {
		d := newDeadProcess(t, ie)
		ctx := d.reserve("k-other", "/v1/tasks", task)
		_, err := ie.Service.RunTask(ctx, completion.TaskParams{Prompt: "Hello"})
		require.NoError(t, err)
		d.lapse()
		r := ie.Do(http.MethodPost, "/v1/tasks", ie.Editor, map[string]any{"prompt": "Bye"}, key("k-other")...)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	})
}
