package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
	"github.com/stretchr/testify/require"
)

// testEnv is a real server on a real SQLite database in a temp dir, with a
// workspace and one API key per role.
type testEnv struct {
	t     testing.TB
	URL   string
	Store *sqlite.DB
	// Path is the database file, for a test that opens it a second time as
	// another process would.
	Path      string
	Workspace *canvas.Workspace
	Admin     string
	Editor    string
	Viewer    string
}

// envOption adjusts the server's options before it is built, for tests
// that need more of it (the completion service and a queue worker, say).
type envOption func(t testing.TB, db *sqlite.DB, o *server.Options)

// newTestEnv starts the server; everything is closed by t.Cleanup.
func newTestEnv(t testing.TB, opts ...envOption) *testEnv {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	envs := env.NewService(env.Options{Store: db, Canvases: db, Changes: db})
	o := server.Options{
		Store:        db,
		Ready:        db.Ping,
		Changes:      db,
		Environments: envs,
		Auth:         server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}),
	}
	for _, opt := range opts {
		opt(t, db, &o)
	}
	if o.Canvases == nil && o.Engine == nil {
		// A promotion publishes through the environment service, as the
		// engine wires it.
		o.Canvases = canvas.NewService(canvas.Options{Store: db, Promoter: o.Environments})
	}
	h, err := server.New(o)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ws := &canvas.Workspace{Name: "test"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	e := &testEnv{t: t, URL: srv.URL, Store: db, Path: path, Workspace: ws}
	e.Admin = e.Key(canvas.RoleAdmin)
	e.Editor = e.Key(canvas.RoleEditor)
	e.Viewer = e.Key(canvas.RoleViewer)
	return e
}

// Key mints an API key of the env's workspace and returns its token.
func (e *testEnv) Key(role canvas.Role, projects ...string) string {
	return e.KeyIn(e.Workspace.ID, role, projects...)
}

// KeyIn mints an API key of another workspace.
func (e *testEnv) KeyIn(workspaceID string, role canvas.Role, projects ...string) string {
	e.t.Helper()
	var p []string
	if len(projects) > 0 {
		p = projects
	}
	token, key := canvas.NewAPIKey(workspaceID, role, p)
	require.NoError(e.t, e.Store.CreateAPIKey(context.Background(), key))
	return token
}

// testResponse is what a request returned.
type testResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON unmarshals the body into v.
func (r *testResponse) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// Map returns the body as a JSON object.
func (r *testResponse) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Code returns the error code of an error body.
func (r *testResponse) Code(t testing.TB) string {
	t.Helper()
	code, _ := r.Map(t)["code"].(string)
	return code
}

// Do sends a request with token as the bearer (none when empty). body may be
// nil, a string or []byte sent as it is, or any value sent as JSON. Every
// request and response is validated against the OpenAPI document.
func (e *testEnv) Do(method, path, token string, body any, headers ...string) *testResponse {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		raw, err = json.Marshal(b)
		require.NoError(e.t, err)
	}
	req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(raw))
	require.NoError(e.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := &testResponse{Status: resp.StatusCode, Header: resp.Header, Body: respBody}
	validateExchange(e.t, req, raw, out)
	if resp.StatusCode >= 400 {
		require.True(e.t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"), "error responses are JSON")
	}
	return out
}

// workflowEnv is a test server that runs workflows: the completion service
// (echo, plus what a test registers), the workflow service with the
// built-in actions calling it, the canvas service compiling the
// specifications of new versions, and a queue worker executing workflow
// runs, async completions and webhook deliveries.
type workflowEnv struct {
	*completionEnv
	Workflows *workflow.Service
}

// newWorkflowEnv starts the server and its worker.
func newWorkflowEnv(t *testing.T) *workflowEnv {
	t.Helper()
	ce := &completionEnv{Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{}))}
	we := &workflowEnv{completionEnv: ce}
	models := model.NewCaller(model.Options{Providers: ce.Providers})
	ce.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		we.Workflows = workflow.NewService(workflow.Options{Store: db, Canvases: db,
			Actions: workflow.Builtins(workflow.BuiltinOptions{Models: models}),
			Notify:  ce.notify, Cancel: we.cancel, PollInterval: 20 * time.Millisecond})
		ce.Service = completion.NewService(completion.Options{Store: db, Canvases: db,
			Environments: o.Environments, Models: models, Notify: ce.notify, Workflows: we.Workflows})
		o.Canvases = canvas.NewService(canvas.Options{Store: db, Workflows: we.Workflows, Promoter: o.Environments})
		o.Completions = ce.Service
		o.Workflows = we.Workflows
	})
	we.StartWorker(t)
	return we
}

// cancel stops, in the current worker, the jobs serving a run that ended.
func (we *workflowEnv) cancel(refID string) int {
	if w := we.worker.Load(); w != nil {
		return w.Cancel(refID)
	}
	return 0
}

// StartWorker runs a worker with the workflow, completion and delivery
// handlers until the returned stop is called (or the test ends).
func (we *workflowEnv) StartWorker(t *testing.T) (stop func()) {
	t.Helper()
	w := queue.NewWorker(we.Store, queue.WorkerOptions{PollInterval: 20 * time.Millisecond,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	w.Handle(workflow.JobKindRun, we.Workflows.HandleJob)
	w.Handle(workflow.JobKindDeadline, we.Workflows.HandleDeadline)
	for _, kind := range completion.JobKinds() {
		w.Handle(kind, we.Service.HandleJob)
	}
	w.Handle(webhook.JobKind, webhook.NewHandler(webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	we.worker.Store(w)
	stop = sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
		we.worker.CompareAndSwap(w, nil)
	})
	t.Cleanup(stop)
	return stop
}
