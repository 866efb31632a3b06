package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
	"github.com/promptcanvas/promptcanvas/queue"
)

func TestCompletion_Async(t *testing.T) {
	e := newCompletionEnv(t, true)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	body := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada"}}

	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"async": true, "stream": true}))
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "chat.completion.async", got["object"])
		assert.Equal(t, completion.StatusQueued, got["status"])
		run := e.waitRun(t, completionsPath+"/"+got["id"].(string))
		assert.Equal(t, completion.StatusCompleted, run["status"])
		assert.Equal(t, true, run["async"])
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, run["result"].(map[string]any)))
		assert.Equal(t, ec.Versions[0].ID, run["versionId"])
	})
	t.Run("Webhook", func(t *testing.T) {
		hook := newHookReceiver(t)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"webhook_url": hook.URL}),
			"X-Svc-Forward-Tenant", "acme", "X-Svc-Forward-Trace-Id", "t-1", "X-Other", "not forwarded")
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)

		n := hook.next(t)
		assert.Equal(t, "completion.succeeded", n.Event.Type)
		assert.Equal(t, "acme", n.Header.Get("Tenant"), "forwarded with the prefix removed")
		assert.Equal(t, "t-1", n.Header.Get("Trace-Id"))
		assert.Empty(t, n.Header.Get("X-Other"))
		assert.Equal(t, "application/json", n.Header.Get("Content-Type"))
		assert.Equal(t, id, n.Event.Data["id"])
		assert.Equal(t, ec.Canvas.ID, n.Event.Data["canvasId"])
		assert.Equal(t, ec.Versions[0].ID, n.Event.Data["versionId"])
		assert.Equal(t, completion.StatusCompleted, n.Event.Data["status"])
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, n.Event.Data["result"].(map[string]any)))
		assert.Equal(t, completion.StatusCompleted, e.waitRun(t, completionsPath+"/"+id)["status"])
	})
	t.Run("StructuredOutputInvalid", func(t *testing.T) {
		hook := newHookReceiver(t)
		bad := mustStructuredVersion(t, e.testEnv, ec.Canvas.ID, `not json`)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"version_id": bad, "webhook_url": hook.URL}))
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		run := e.waitRun(t, completionsPath+"/"+r.Map(t)["id"].(string))
		assert.Equal(t, completion.StatusFailed, run["status"])
		assert.Equal(t, canvas.EPROVIDER, run["error"].(map[string]any)["code"])
		assert.Nil(t, run["result"])
		n := hook.next(t)
		assert.Equal(t, "completion.failed", n.Event.Type)
		assert.Equal(t, completion.StatusFailed, n.Event.Data["status"])
		assert.Equal(t, canvas.EPROVIDER, n.Event.Data["error"].(map[string]any)["code"])
	})
	t.Run("BadRequestAtOnce", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"async": true, "variables": map[string]any{}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"async": true, "environment_name": "nope"}))
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
}

// blockingProvider answers nothing until its context ends, and says when a
// call has started.
type blockingProvider struct {
	model.Provider
	started chan struct{}
}

func (p *blockingProvider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	p.started <- struct{}{}
	<-ctx.Done()
	return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: "stopped", Err: ctx.Err()}
}

// TestCompletion_AsyncSurvivesWorkerLoss shows that an accepted async
// completion always finishes: after the worker is stopped mid-job, and after
// a worker dies holding the job's lease without releasing it.
func TestCompletion_AsyncSurvivesWorkerLoss(t *testing.T) {
	t.Run("StoppedMidJob", func(t *testing.T) {
		e := newCompletionEnv(t, false)
		ec := mustEnvCanvas(t, e.testEnv, 1)
		ec.mustPublish(t, "production", 1)
		block := &blockingProvider{Provider: model.NewEcho(model.EchoOptions{}), started: make(chan struct{}, 4)}
		e.Providers.Register("flaky", block)

		stop := e.StartWorker(t, queue.WorkerOptions{ShutdownTimeout: time.Millisecond})
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"variables": map[string]any{"name": "Ada"}, "async": true, "settings": map[string]any{"model": "flaky"}})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		path := completionsPath + "/" + r.Map(t)["id"].(string)
		select {
		case <-block.started:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the worker never started the job")
		}
		stop() // the worker goes away mid-job
		run := e.Do(http.MethodGet, path, e.Editor, nil).Map(t)
		assert.Equal(t, completion.StatusRunning, run["status"], "the job was interrupted, not finished")

		e.Providers.Register("flaky", model.NewEcho(model.EchoOptions{}))
		e.StartWorker(t, queue.WorkerOptions{})
		run = e.waitRun(t, path)
		assert.Equal(t, completion.StatusCompleted, run["status"], "a new worker finished the job")
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, run["result"].(map[string]any)))
	})
	t.Run("CrashedHoldingLease", func(t *testing.T) {
		e := newCompletionEnv(t, false)
		ec := mustEnvCanvas(t, e.testEnv, 1)
		ec.mustPublish(t, "production", 1)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"variables": map[string]any{"name": "Ada"}, "async": true})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)

		// A worker claims the job and starts the run, then dies: no
		// heartbeat, no release.
		ctx := context.Background()
		jobs, err := e.Store.ClaimJobs(ctx, "crashed-worker", completion.JobKinds(), 1, 50*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, id, jobs[0].RefID)
		_, err = e.Store.StartRun(ctx, e.Workspace.ID, id)
		require.NoError(t, err)

		e.StartWorker(t, queue.WorkerOptions{})
		run := e.waitRun(t, completionsPath+"/"+id)
		assert.Equal(t, completion.StatusCompleted, run["status"], "the expired lease was claimed again")
		// The run is finished before the worker records the job's outcome,
		// so wait for the job itself.
		var job *queue.Job
		require.Eventually(t, func() bool {
			job, err = e.Store.GetJob(ctx, jobs[0].ID)
			require.NoError(t, err)
			return job.Status != queue.StatusRunning
		}, 10*time.Second, 10*time.Millisecond)
		assert.Equal(t, queue.StatusSucceeded, job.Status)
		assert.Equal(t, 2, job.Attempts)
	})
}

// openAIFake answers the OpenAI chat completions endpoint with a fixed
// reply and records the model it was asked for.
func openAIFake(t *testing.T, models chan<- string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		models <- req.Model
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"` + req.Model + `",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the back end"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestCompletion_OpenAICompatible(t *testing.T) {
	e := newCompletionEnv(t, false)
	models := make(chan string, 4)
	oa, err := openai.New(openai.Options{BaseURL: openAIFake(t, models)})
	require.NoError(t, err)
	e.Providers.RegisterPrefix("", oa)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)

	r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}, "settings": map[string]any{"model": "gpt-test"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	got := r.Map(t)
	assert.Equal(t, "Hello from the back end", completionText(t, got))
	assert.Equal(t, map[string]any{"inputTokens": 9.0, "outputTokens": 5.0}, got["usage"])
	assert.Equal(t, "gpt-test", <-models, "the configured back end served the model")

	r = e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "Prompt 1 for Ada", completionText(t, r.Map(t)), "echo stays served by the echo provider")
}

// failingOnce fails its first call with a back-end error, then answers as
// the wrapped provider does.
type failingOnce struct {
	model.Provider
	calls atomic.Int32
}

func (p *failingOnce) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	if p.calls.Add(1) == 1 {
		return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: "The model back end failed."}
	}
	return p.Provider.Complete(ctx, req)
}

func TestCompletion_AsyncRetries(t *testing.T) {
	e := newCompletionEnv(t, true)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	flaky := &failingOnce{Provider: model.NewEcho(model.EchoOptions{})}
	e.Providers.Register("flaky", flaky)

	r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}, "async": true, "settings": map[string]any{"model": "flaky"}})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	run := e.waitRun(t, completionsPath+"/"+r.Map(t)["id"].(string))
	assert.Equal(t, completion.StatusCompleted, run["status"], "a transient failure is retried")
	assert.Equal(t, int32(2), flaky.calls.Load())

	// Sync runs are not retried: the failure is the answer.
	r = e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}, "settings": map[string]any{"model": "flaky"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	flaky.calls.Store(0)
	r = e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}, "settings": map[string]any{"model": "flaky"}})
	require.Equal(t, http.StatusBadGateway, r.Status, "%s", r.Body)
	assert.Equal(t, canvas.EPROVIDER, readError(t, r).Code)
}
