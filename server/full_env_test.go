package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
)

// fullJWTSecret is the HS256 secret of the full test server.
var fullJWTSecret = []byte("full-env-secret-of-at-least-32-bytes!")

// fullEnv is a test server with every service wired as canvasd wires
// them (echo model, vault, workflows, test cases, generations,
// applications, delivery log) and HS256 JWTs, but no queue worker: what a
// request queues stays queued, so that tests see the records requests
// leave.
type fullEnv struct {
	*testEnv
	Engine      *engine.Engine
	Files       *vault.Service
	Generations *testcase.GenerationService
}

// newFullEnv starts the server over an engine, as canvasd builds it, whose
// background work does not run.
func newFullEnv(t *testing.T) *fullEnv {
	t.Helper()
	fe := &fullEnv{}
	fe.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		secrets, err := credential.NewKeyRing(credential.NewKey())
		require.NoError(t, err)
		e, err := engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL,
			Secrets: secrets, Limits: engine.Limits{AllowPrivateNetworks: true, MaxFileSize: testMaxSize}})
		require.NoError(t, err)
		*o = server.Options{Engine: e,
			Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db, JWTSecrets: [][]byte{fullJWTSecret}})}
		fe.Engine, fe.Files, fe.Generations = e, e.Files, e.Generations
	})
	return fe
}

// RunGenerations runs a queue worker executing test case generations until
// the test ends.
func (fe *fullEnv) RunGenerations(t *testing.T) {
	t.Helper()
	w := queue.NewWorker(fe.Store, queue.WorkerOptions{PollInterval: 10 * time.Millisecond})
	w.Handle(testcase.JobKindGenerate, fe.Generations.HandleJob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// world is a workspace filled through the API with one of everything,
// inside project P1 when the thing has a canvas: what the authorization
// tests point their requests at.
type world struct {
	e *fullEnv
	// P1 holds every canvas; P2 is another project of the workspace.
	P1, P2 string
	// Canvas is a canvas of P1 with a plain version (Version, echo model,
	// published to production) and a workflow version (WorkflowVersion).
	Canvas, Version, Message, WorkflowVersion string
	// Environment is a custom environment of Canvas.
	Environment string
	// App is an application of Canvas whose subscription sends to Hook.
	App  string
	Hook *httptest.Server
	// Completion is a run of Canvas through App; its notification is
	// Delivery, which holds the completion's output.
	Completion, Delivery string
	// Task is a task run created by the workspace's admin key.
	Task string
	// TestCase and Tag belong to Canvas; Generation and Execution are a
	// run of TestCase.
	TestCase, Tag, Generation, Execution string
	// WorkflowRun is a pending preview run of WorkflowVersion.
	WorkflowRun string
	// File is a file uploaded by the workspace's editor key.
	File string
	// Credential is an Anthropic credential limited to P1.
	Credential string
	// ReviewItem is Completion in Canvas's review queue, added by hand.
	ReviewItem string
	// Experiment is a completed experiment of Canvas over Version with
	// TestCase; Result is its result.
	Experiment, Result string
	// Evaluator is a saved evaluator of Canvas.
	Evaluator string
	// Requester is an editor key of its own, which makes the world's
	// publication requests (Request, pending, of a new version to
	// production), so that the world's other callers may decide them.
	Requester, Request string
}

// newWorld fills e's workspace.
func newWorld(t *testing.T, e *fullEnv) *world {
	t.Helper()
	w := &world{e: e}
	w.P1 = mustProjectID(t, e.testEnv, "p1")
	w.P2 = mustProjectID(t, e.testEnv, "p2")
	w.Canvas = mustCanvas(t, e.testEnv, w.P1, "Support")["id"].(string)
	w.Version = w.NewVersion(t)
	publish(t, e.testEnv, w.Canvas, w.Version)
	w.Message = mustCreate(t, e.testEnv, "/prompt-version-message", e.Editor, map[string]any{
		"promptVersionId": w.Version, "role": "user", "content": "second"})["id"].(string)
	w.WorkflowVersion = mustCreate(t, e.testEnv, "/prompt-version", e.Editor,
		map[string]any{"promptId": w.Canvas, "workflowSpec": greetSpec})["id"].(string)
	w.Environment = w.NewEnvironment(t)
	w.Hook = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(w.Hook.Close)
	w.App = w.NewApp(t)

	r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": w.Canvas, "application_id": w.App,
		"variables": map[string]any{"name": "Ada"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	w.Completion = r.Map(t)["id"].(string)
	page := e.Do(http.MethodGet, "/webhooks/deliveries?applicationId="+w.App, e.Admin, nil)
	require.Equal(t, http.StatusOK, page.Status, "%s", page.Body)
	var deliveries deliveryPage
	page.JSON(t, &deliveries)
	require.Len(t, deliveries.Data, 1, "the completion notifies the application")
	w.Delivery = deliveries.Data[0].ID

	r = e.Do(http.MethodPost, "/v1/tasks", e.Admin, map[string]any{"prompt": "Say hi"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	w.Task = r.Map(t)["id"].(string)

	w.TestCase = w.NewTestCase(t)
	w.Tag = mustCreate(t, e.testEnv, "/test-case-tags", e.Editor, map[string]any{
		"name": "smoke", "color": "red", "promptId": w.Canvas})["id"].(string)
	run := w.RunTestCase(t)
	w.Generation, w.Execution = run["generationId"].(string), run["executionId"].(string)
	w.WorkflowRun = w.NewWorkflowRun(t)
	w.File = w.NewFile(t)
	w.Credential = w.NewCredential(t)
	w.ReviewItem = mustCreate(t, e.testEnv, "/review-queue", e.Editor, map[string]any{"runId": w.Completion})["id"].(string)
	w.Experiment = w.NewExperiment(t)
	w.runExperiments(t)
	results := e.Do(http.MethodGet, "/experiments/"+w.Experiment+"/results", e.Viewer, nil)
	require.Equal(t, http.StatusOK, results.Status, "%s", results.Body)
	var rp struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	results.JSON(t, &rp)
	require.Len(t, rp.Data, 1, "the experiment ran its one case")
	w.Result = rp.Data[0].ID
	w.Evaluator = mustCreate(t, e.testEnv, "/evaluators", e.Editor, map[string]any{"promptId": w.Canvas,
		"name": "polite", "type": "contains"})["id"].(string)
	w.Requester = e.Key(canvas.RoleEditor)
	w.Request = w.NewRequest(t)
	return w
}

// NewRequest makes a pending publication request, by Requester, of a new
// version of Canvas to production.
func (w *world) NewRequest(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/publication-requests", w.Requester, map[string]any{"resourceType": "prompt",
		"resourceId": w.Canvas, "envName": "production", "versionId": w.NewVersion(t), "comment": "ready"})["id"].(string)
}

// NewExperiment starts an experiment of Canvas over Version and TestCase,
// which stays queued until runExperiments.
func (w *world) NewExperiment(t *testing.T) string {
	t.Helper()
	r := w.e.Do(http.MethodPost, "/experiments", w.e.Editor, map[string]any{"promptId": w.Canvas,
		"versionIds": []string{w.Version}, "testCaseIds": []string{w.TestCase},
		"evaluators": []map[string]any{{"name": "exact", "type": "exact"}}})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	return r.Map(t)["id"].(string)
}

// runExperiments runs the jobs of the experiments queued so far, as the
// engine's worker would.
func (w *world) runExperiments(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	jobs, err := w.e.Engine.Store.ClaimJobs(ctx, "world", []string{experiment.JobKindRun}, 10, time.Minute)
	require.NoError(t, err)
	for _, j := range jobs {
		require.NoError(t, w.e.Engine.Experiments.HandleJob(ctx, j))
		require.NoError(t, w.e.Engine.Store.CompleteJob(ctx, j.ID, "world"))
	}
}

// NewCompletion runs Canvas and returns the run's id.
func (w *world) NewCompletion(t *testing.T) string {
	t.Helper()
	r := w.e.Do(http.MethodPost, "/v2/chat/completions", w.e.Editor, map[string]any{"canvas_id": w.Canvas,
		"variables": map[string]any{"name": "Ada"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)["id"].(string)
}

// NewCredential creates an Anthropic credential limited to P1, with a new
// name.
func (w *world) NewCredential(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/credentials", w.e.Admin, map[string]any{"name": uniqueName("claude"),
		"provider": "anthropic", "apiKey": "sk-ant-world-key-0001", "projectIds": []string{w.P1}})["id"].(string)
}

// NewPrice sets a price override of a new model name and returns the name.
func (w *world) NewPrice(t *testing.T) string {
	t.Helper()
	name := uniqueName("llama3.1:8b")
	r := w.e.Do(http.MethodPut, "/models/"+name, w.e.Admin, map[string]any{"provider": "openai-compatible",
		"inputPerMillion": 0.1, "outputPerMillion": 0.2})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return name
}

// NewVersion creates a version of Canvas that the echo model runs.
func (w *world) NewVersion(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/prompt-version", w.e.Editor, map[string]any{"promptId": w.Canvas,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Hello {{name}}"}})["id"].(string)
}

// NewEnvironment creates a custom environment of Canvas with a new name.
func (w *world) NewEnvironment(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/environment", w.e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": w.Canvas, "name": uniqueName("env")})["id"].(string)
}

// NewApp creates an application of Canvas sending to Hook.
func (w *world) NewApp(t *testing.T) string {
	t.Helper()
	app, _ := mustApplication(t, w.e.testEnv, map[string]any{"name": "shop", "promptId": w.Canvas,
		"events": map[string]any{"enabled": true, "url": w.Hook.URL}})
	return app["id"].(string)
}

// NewTestCase creates a test case of Canvas.
func (w *world) NewTestCase(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/test-case", w.e.Editor, map[string]any{"promptId": w.Canvas,
		"title": "greets", "variables": map[string]any{"name": "Ada"}})["id"].(string)
}

// RunTestCase runs TestCase against Version and returns the answer.
func (w *world) RunTestCase(t *testing.T) map[string]any {
	t.Helper()
	r := w.e.Do(http.MethodPost, "/test-case/"+w.TestCase+"/run", w.e.Editor, map[string]any{"promptVersionId": w.Version})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)
}

// NewWorkflowRun starts a preview run of WorkflowVersion; with no worker it
// stays pending.
func (w *world) NewWorkflowRun(t *testing.T) string {
	t.Helper()
	return mustCreate(t, w.e.testEnv, "/workflow/runs", w.e.Editor, map[string]any{"versionId": w.WorkflowVersion,
		"input": map[string]any{"name": "Ada"}})["id"].(string)
}

// NewFile uploads a text file as the workspace's editor key.
func (w *world) NewFile(t *testing.T) string {
	t.Helper()
	r := w.e.Do(http.MethodPost, "/v3/files", w.e.Editor, map[string]any{"fileName": "notes.txt"},
		"x-compatibility-date", compatDate)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var up vault.Upload
	r.JSON(t, &up)
	put := w.e.Do(http.MethodPut, up.UploadURL[len(testBaseURL):], "", []byte("secret notes"), "Content-Type", "text/plain")
	require.Equal(t, http.StatusOK, put.Status, "%s", put.Body)
	return up.ID
}

// NewKey mints a viewer API key of the world's workspace and returns its id.
func (w *world) NewKey(t *testing.T) string {
	t.Helper()
	token := w.e.Key(canvas.RoleViewer)
	key, err := w.e.Store.GetAPIKeyByHash(context.Background(), canvas.HashToken(token))
	require.NoError(t, err)
	return key.ID
}

var uniqueSeq atomic.Int64

// uniqueName returns a new environment-safe name starting with prefix.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, uniqueSeq.Add(1))
}
