package experiment_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

// world is an engine on a data directory, with the caller's context.
type world struct {
	e   *engine.Engine
	ctx context.Context
	dir string
}

// openWorld opens the engine on dir (a new one when empty), with the
// OpenAI-compatible provider for judges, and runs its background work
// until the test ends or close is called.
func openWorld(t testing.TB, dir string) *world { return openWorldWith(t, dir, 4) }

// openWorldWith is openWorld with the model lane's concurrency, which
// bounds the case runs of an experiment too.
func openWorldWith(t testing.TB, dir string, concurrency int) *world {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	e, err := engine.OpenSQLite(context.Background(), dir, engine.Options{
		ProviderKinds: model.Kinds{canvas.ProviderOpenAICompatible: openai.Factory},
		Limits:        engine.Limits{AllowPrivateNetworks: true, ModelConcurrency: concurrency}})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	go e.Run(context.Background())
	ctx := context.Background()
	_, _, err = e.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	return &world{e: e, ctx: ctx, dir: dir}
}

// cases are the test cases of the two-version canvas: v1 answers q, v2
// answers q and suffix. Expected outputs make v2 regress on a3 and a4 and
// improve on a5.
var cases = []struct{ q, suffix, expected string }{
	{"a1", "", "a1"}, {"a2", "", "a2"}, {"a3", "!", "a3"}, {"a4", "!", "a4"}, {"a5", "!", "a5!"},
}

// canvasOf creates a personal canvas with versions v1 ("{{q}}") and v2
// ("{{q}}{{suffix}}") and a test case per entry of cases.
func (w *world) canvasOf(t testing.TB) (c *canvas.Canvas, v1, v2 *canvas.Version) {
	t.Helper()
	c, err := w.e.Canvases.CreateCanvas(w.ctx, canvas.CreateCanvasParams{Title: "Echo"})
	require.NoError(t, err)
	vars := []canvas.Variable{{Name: "q", Type: canvas.VariableText, Required: true},
		{Name: "suffix", Type: canvas.VariableText}}
	v1, err = w.e.Canvases.CreateVersion(w.ctx, canvas.CreateVersionParams{PromptID: c.ID, Variables: vars,
		Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: "{{q}}"}})
	require.NoError(t, err)
	v2, err = w.e.Canvases.CreateVersion(w.ctx, canvas.CreateVersionParams{PromptID: c.ID, Variables: vars,
		Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: "{{q}}{{suffix}}"}})
	require.NoError(t, err)
	for _, tc := range cases {
		expected := tc.expected
		_, err := w.e.TestCases.CreateTestCase(w.ctx, testCaseParams(c.ID, tc.q, tc.suffix, &expected))
		require.NoError(t, err)
	}
	return c, v1, v2
}

// wait polls the experiment until it has ended.
func (w *world) wait(t testing.TB, id string) *experiment.Experiment {
	t.Helper()
	return w.waitEvery(t, id, 20*time.Millisecond)
}

// waitEvery polls the experiment every interval until it has ended.
func (w *world) waitEvery(t testing.TB, id string, interval time.Duration) *experiment.Experiment {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		x, err := w.e.Experiments.Get(w.ctx, id)
		require.NoError(t, err)
		if x.Terminal() {
			return x
		}
		require.True(t, time.Now().Before(deadline), "the experiment ends in time; it is %s at %+v", x.Status, x.Progress)
		time.Sleep(interval)
	}
}

// judge is a fake OpenAI-compatible vendor answering every chat completion
// with a structured {score, reason}, as the chat completions API does.
type judge struct {
	mu     sync.Mutex
	bodies []map[string]any
	score  float64
	url    string
}

func newJudge(t *testing.T, score float64) *judge {
	j := &judge{score: score}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		j.mu.Lock()
		j.bodies = append(j.bodies, body)
		j.mu.Unlock()
		answer, _ := json.Marshal(map[string]any{"score": j.score, "reason": "meets the rubric"})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": string(answer), "refusal": nil}}},
			"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
		})
	}))
	t.Cleanup(srv.Close)
	j.url = srv.URL + "/v1"
	return j
}

// requests returns the bodies the judge received.
func (j *judge) requests() []map[string]any {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]map[string]any(nil), j.bodies...)
}

// hook is a fake webhook evaluator: it verifies each request's Standard
// Webhooks signature, counts the message ids it receives, and answers
// passed, except a 500 for the outputs in fail. Requests past the first
// open wait until gate is closed (or the caller goes away).
type hook struct {
	mu     sync.Mutex
	ids    map[string]int
	bodies []experiment.HookRequest
	bad    int
	secret string
	url    string
	fail   map[string]bool
	open   int
	gate   chan struct{}
}

func newHook(t *testing.T, fail ...string) *hook {
	return newHookSigned(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", fail...)
}

// newHookSigned is newHook verifying the signatures of secret.
func newHookSigned(t *testing.T, secret string, fail ...string) *hook {
	h := &hook{ids: map[string]int{}, secret: secret, fail: map[string]bool{}, open: -1, gate: make(chan struct{})}
	for _, f := range fail {
		h.fail[f] = true
	}
	wh, err := standardwebhooks.NewWebhook(h.secret)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body experiment.HookRequest
		if wh.Verify(raw, r.Header) != nil || json.Unmarshal(raw, &body) != nil {
			h.mu.Lock()
			h.bad++
			h.mu.Unlock()
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		h.mu.Lock()
		n := len(h.bodies)
		h.bodies = append(h.bodies, body)
		h.ids[r.Header.Get("webhook-id")]++
		open := h.open
		h.mu.Unlock()
		if open >= 0 && n >= open {
			select {
			case <-h.gate:
			case <-r.Context().Done():
				return
			}
		}
		if h.fail[body.Output] {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"score": 1, "passed": true,
			"reason": "checked " + strings.TrimSpace(body.Output)})
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/judge"
	return h
}

func (h *hook) evaluator() experiment.Evaluator {
	return experiment.Evaluator{Name: "team", Type: experiment.TypeWebhook, URL: h.url, Secret: h.secret, TimeoutMs: 5000}
}

// received returns how many requests carried each message id, and how
// many failed the signature check.
func (h *hook) received() (map[string]int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.ids))
	for k, v := range h.ids {
		out[k] = v
	}
	return out, h.bad
}

func ptr[T any](v T) *T { return &v }

func envPublish(canvasID, versionID string) env.PublishVersionParams {
	return env.PublishVersionParams{CanvasID: canvasID, EnvName: env.Production, VersionID: versionID}
}
