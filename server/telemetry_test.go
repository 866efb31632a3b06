package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
)

// telemetryEnv is canvasd in-process: an engine over SQLite in a temp dir,
// running, with spans kept in memory and its own metrics registry.
type telemetryEnv struct {
	URL   string
	Admin string
	Spans *tracetest.InMemoryExporter
}

func newTelemetryEnv(t *testing.T) *telemetryEnv {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newTelemetryEnvWith(t, tp)
	e.Spans = spans
	return e
}

// newTelemetryEnvWith is newTelemetryEnv with the given TracerProvider (nil:
// the engine's, which records nothing) and no span exporter.
func newTelemetryEnvWith(t *testing.T, tp trace.TracerProvider) *telemetryEnv {
	t.Helper()
	ctx := context.Background()
	e, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{Metrics: prometheus.NewRegistry(), TracerProvider: tp,
		Limits: engine.Limits{AllowPrivateNetworks: true}})
	require.NoError(t, err)
	go func() { _ = e.Run(ctx) }()
	t.Cleanup(func() { _ = e.Close() })
	_, admin, err := e.Bootstrap(ctx, "")
	require.NoError(t, err)
	h, err := server.New(server.Options{Engine: e, Auth: server.NewAuthenticator(server.AuthOptions{Store: e.Store, Changes: e.Changes}), PublicMetrics: true})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &telemetryEnv{URL: srv.URL, Admin: admin}
}

// call sends a request and returns the status and the body.
func (e *telemetryEnv) call(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	return e.callWith(t, method, path, token, body, nil)
}

// callWith is call with more request headers.
func (e *telemetryEnv) callWith(t *testing.T, method, path, token string, body any, header http.Header) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// created sends a request that must answer 201 and returns the id.
func (e *telemetryEnv) created(t *testing.T, path string, body any) string {
	t.Helper()
	status, out := e.call(t, http.MethodPost, path, e.Admin, body)
	require.Equal(t, http.StatusCreated, status, "%s", out)
	var v struct{ ID string }
	require.NoError(t, json.Unmarshal(out, &v))
	return v.ID
}

// notifiedCompletion creates a canvas with one version and runs it as an
// asynchronous completion, sent with header, whose webhook goes to a
// receiver of the test; it returns the traceparent headers the receiver
// gets.
func (e *telemetryEnv) notifiedCompletion(t *testing.T, header http.Header) <-chan string {
	t.Helper()
	traceparents := make(chan string, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparents <- r.Header.Get("traceparent")
	}))
	t.Cleanup(receiver.Close)
	projectID := e.created(t, "/projects", map[string]any{"name": "Ops"})
	canvasID := e.created(t, "/prompt", map[string]any{"title": "Traced", "projectId": projectID})
	versionID := e.created(t, "/prompt-version", map[string]any{"promptId": canvasID, "title": "v1",
		"message": map[string]any{"role": "system", "content": "Hello"}})
	status, out := e.callWith(t, http.MethodPost, "/v2/chat/completions", e.Admin,
		map[string]any{"canvas_id": canvasID, "version_id": versionID, "webhook_url": receiver.URL}, header)
	require.Equal(t, http.StatusAccepted, status, "%s", out)
	return traceparents
}

// span returns the first exported span named name.
func span(spans tracetest.SpanStubs, name string) (tracetest.SpanStub, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}

func TestServer_Telemetry(t *testing.T) {
	t.Parallel()
	e := newTelemetryEnv(t)
	traceparents := e.notifiedCompletion(t, nil)

	var tp string
	select {
	case tp = <-traceparents:
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was not delivered")
	}

	t.Run("ConnectedSpans", func(t *testing.T) {
		var spans tracetest.SpanStubs
		require.Eventually(t, func() bool {
			spans = e.Spans.GetSpans()
			for _, name := range []string{"POST /v2/chat/completions", "job completion.run", "model.call",
				"job webhook.deliver", "webhook POST"} {
				if _, ok := span(spans, name); !ok {
					return false
				}
			}
			return true
		}, 10*time.Second, 10*time.Millisecond)

		root, ok := span(spans, "POST /v2/chat/completions")
		require.True(t, ok, "the request's span")
		assert.Equal(t, trace.SpanKindServer, root.SpanKind)
		traceID := root.SpanContext.TraceID()
		run, ok := span(spans, "job completion.run")
		require.True(t, ok)
		assert.Equal(t, traceID, run.SpanContext.TraceID(), "the job joins the request's trace")
		assert.Equal(t, root.SpanContext.SpanID(), run.Parent.SpanID(), "the job is a child of the request")
		call, ok := span(spans, "model.call")
		require.True(t, ok)
		assert.Equal(t, run.SpanContext.SpanID(), call.Parent.SpanID(), "the model call is a child of the job")
		deliver, ok := span(spans, "job webhook.deliver")
		require.True(t, ok)
		assert.Equal(t, traceID, deliver.SpanContext.TraceID(), "the delivery joins the trace")
		send, _ := span(spans, "webhook POST")
		assert.Equal(t, deliver.SpanContext.SpanID(), send.Parent.SpanID())
		commits := 0
		for _, s := range spans {
			if s.Name == "sqlite.commit runs" && s.Parent.SpanID() == root.SpanContext.SpanID() {
				commits++
			}
		}
		assert.Equal(t, 1, commits, "the request's store transaction (the run and its job, in the run records' shared commit) is its child")

		parts := strings.Split(tp, "-")
		require.Len(t, parts, 4, "traceparent %q", tp)
		assert.Equal(t, traceID.String(), parts[1], "the receiver got the trace's context")
		assert.Equal(t, send.SpanContext.SpanID().String(), parts[2])
	})

	t.Run("Metrics", func(t *testing.T) {
		status, _ := e.call(t, http.MethodGet, "/metrics", "", nil)
		assert.Equal(t, http.StatusUnauthorized, status, "admins only")

		var body string
		require.Eventually(t, func() bool {
			status, out := e.call(t, http.MethodGet, "/metrics", e.Admin, nil)
			require.Equal(t, http.StatusOK, status)
			body = string(out)
			return strings.Contains(body, `canvas_webhook_delivery_attempts_total{result="2xx"} 1`) &&
				strings.Contains(body, `canvas_jobs_total{kind="webhook.deliver",result="succeeded"} 1`)
		}, 10*time.Second, 10*time.Millisecond)
		for _, want := range []string{
			`canvas_http_requests_total{code="202",route="POST /v2/chat/completions"} 1`,
			`canvas_http_requests_total{code="201",route="POST /prompt"} 1`,
			`canvas_http_request_duration_seconds_count{class="2xx",route="POST /prompt-version"} 1`,
			`canvas_model_call_duration_seconds_count{model="echo",result="ok"} 1`,
			`canvas_model_tokens_total{direction="output",model="echo"}`,
			`canvas_jobs_total{kind="completion.run",result="succeeded"} 1`,
			`canvas_job_duration_seconds_count{kind="completion.run"} 1`,
			`canvas_queue_depth{lane="model"} 0`,
			`canvas_queue_oldest_age_seconds{lane="delivery"} 0`,
			`canvas_queue_running{lane="maintenance"}`,
			`canvas_db_commit_duration_seconds_count{committer="write"}`,
			`canvas_db_commit_writes_count{committer="jobs"}`,
			`canvas_cache_requests_total{cache="api_key",result="hit"}`,
			`canvas_cache_hit_ratio{cache="served_version"}`,
			`canvas_publications_total 0`,
			`canvas_model_work_predicted_start_seconds`,
		} {
			assert.Contains(t, body, want)
		}
	})
}

// TestServer_TraceContextWithoutTracing shows that a server that records no
// spans (no TracerProvider configured) still carries a caller's W3C trace
// context on: the webhook request of an asynchronous completion names the
// caller's trace.
func TestServer_TraceContextWithoutTracing(t *testing.T) {
	t.Parallel()
	e := newTelemetryEnvWith(t, nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceparents := e.notifiedCompletion(t, http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}})
	select {
	case tp := <-traceparents:
		parts := strings.Split(tp, "-")
		require.Len(t, parts, 4, "traceparent %q", tp)
		assert.Equal(t, traceID, parts[1], "the receiver got the caller's trace")
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was not delivered")
	}
}
