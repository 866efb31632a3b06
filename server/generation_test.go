package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// generationEnv is a test server with the completion, test case and
// generation services, whose queue worker starts on demand.
type generationEnv struct {
	*testEnv
	Providers   *model.Registry
	Completions *completion.Service
	Generations *testcase.GenerationService
	worker      atomic.Pointer[queue.Worker]
}

func newGenerationEnv(t *testing.T) *generationEnv {
	t.Helper()
	ge := &generationEnv{Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{}))}
	ge.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		ge.Completions = completion.NewService(completion.Options{Store: db, Canvases: db,
			Environments: o.Environments, Models: model.NewCaller(model.Options{Providers: ge.Providers}), Notify: ge.notify})
		o.Completions = ge.Completions
		o.TestCases = testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
		ge.Generations = testcase.NewGenerationService(testcase.GenerationOptions{TestCases: o.TestCases,
			Store: db, Runner: ge.Completions, Notify: ge.notify, Cancel: ge.cancel})
		o.Generations = ge.Generations
	})
	return ge
}

func (ge *generationEnv) notify() {
	if w := ge.worker.Load(); w != nil {
		w.Notify()
	}
}

func (ge *generationEnv) cancel(refID string) int {
	if w := ge.worker.Load(); w != nil {
		return w.Cancel(refID)
	}
	return 0
}

// StartWorker runs a worker with the completion and generation handlers
// until the test ends; zero options get quick polling.
func (ge *generationEnv) StartWorker(t *testing.T, opts queue.WorkerOptions) {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	w := queue.NewWorker(ge.Store, opts)
	for _, kind := range completion.JobKinds() {
		w.Handle(kind, ge.Completions.HandleJob)
	}
	w.Handle(testcase.JobKindGenerate, ge.Generations.HandleJob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	ge.worker.Store(w)
	t.Cleanup(sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
	}))
}

// mustTestCase stores a test case of canvasID filled by fill.
func (ge *generationEnv) mustTestCase(t testing.TB, canvasID string, fill func(tc *testcase.TestCase)) *testcase.TestCase {
	t.Helper()
	tc := &testcase.TestCase{WorkspaceID: ge.Workspace.ID, PromptID: canvasID, Title: "case",
		Variables: map[string]any{"name": "Ada"}, CreatedBy: "tester", UpdatedBy: "tester"}
	if fill != nil {
		fill(tc)
	}
	require.NoError(t, ge.Store.CreateTestCase(context.Background(), tc))
	return tc
}

// mustVersion stores a version of ec's canvas with one system message and
// the model given.
func (ge *generationEnv) mustVersion(t testing.TB, ec *envCanvas, model, prompt string) *canvas.Version {
	t.Helper()
	v := &canvas.Version{PromptID: ec.Canvas.ID, Title: model, WorkspaceID: ge.Workspace.ID,
		Configuration: canvas.Configuration{Model: model, Type: "chat"}, CreatedBy: "tester", UpdatedBy: "tester",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: prompt, CreatedBy: "tester", UpdatedBy: "tester"}}}
	require.NoError(t, ge.Store.CreateVersion(context.Background(), v))
	return v
}

// runOne runs a test case through the API and returns the answer.
func (ge *generationEnv) runOne(t testing.TB, tcID, versionID string) map[string]any {
	t.Helper()
	r := ge.Do(http.MethodPost, "/test-case/"+tcID+"/run", ge.Editor, map[string]any{"promptVersionId": versionID})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)
}

// waitGeneration polls a generation until it is terminal and returns it.
func (ge *generationEnv) waitGeneration(t testing.TB, id string) map[string]any {
	t.Helper()
	var g map[string]any
	require.Eventually(t, func() bool {
		g = ge.Do(http.MethodGet, "/test-case/generations/"+id, ge.Viewer, nil).Map(t)
		s := g["status"]
		return s == testcase.GenerationCompleted || s == testcase.GenerationFailed || s == testcase.GenerationAborted
	}, 20*time.Second, 10*time.Millisecond)
	return g
}

// waitExecution polls an execution until none of its generations is
// initializing or running and returns it.
func (ge *generationEnv) waitExecution(t testing.TB, id string) map[string]any {
	t.Helper()
	var e map[string]any
	require.Eventually(t, func() bool {
		e = ge.Do(http.MethodGet, "/test-case/executions/"+id, ge.Viewer, nil).Map(t)
		c := e["counts"].(map[string]any)
		return c["initializing"] == 0.0 && c["running"] == 0.0
	}, 60*time.Second, 20*time.Millisecond)
	return e
}

func TestGeneration_Run(t *testing.T) {
	top := t
	ge := newGenerationEnv(t)
	ec := mustEnvCanvas(t, ge.testEnv, 2)
	v1 := ec.Versions[0]
	tc := ge.mustTestCase(t, ec.Canvas.ID, func(tc *testcase.TestCase) {
		tc.ExpectedOutput = ptrTo("Prompt 1 for Ada\n")
	})

	t.Run("OK", func(t *testing.T) {
		res := ge.runOne(t, tc.ID, v1.ID)
		genID := res["generationId"].(string)
		assert.Equal(t, []any{tc.ID}, res["testCaseIds"])
		assert.Equal(t, []any{genID}, res["generationIds"])
		require.NoError(t, uuid.Validate(res["executionId"].(string)))

		// No worker runs yet: the generation was committed before the answer.
		g := ge.Do(http.MethodGet, "/test-case/generations/"+genID, ge.Viewer, nil)
		require.Equal(t, http.StatusOK, g.Status, "%s", g.Body)
		got := g.Map(t)
		assert.Equal(t, testcase.GenerationInitializing, got["status"])
		assert.Nil(t, got["output"])
		assert.Nil(t, got["cost"])
		assert.Nil(t, got["completedAt"])
		assert.Equal(t, res["executionId"], got["executionId"])
		assert.Equal(t, v1.ID, got["promptVersionId"])
		assert.Equal(t, tc.ID, got["testCaseId"])

		ge.StartWorker(top, queue.WorkerOptions{}) // for the rest of the test
		got = ge.waitGeneration(t, genID)
		assert.Equal(t, testcase.GenerationCompleted, got["status"])
		assert.Equal(t, "Prompt 1 for Ada", got["output"])
		assert.Equal(t, true, got["passed"], "exact match, surrounding white space trimmed")
		assert.Equal(t, map[string]any{"inputTokens": 4.0, "outputTokens": 4.0}, got["usage"])
		assert.Equal(t, map[string]any{"input": 0.0, "output": 0.0, "total": 0.0, "currency": "USD"}, got["cost"],
			"the run's cost: echo's price is zero")
		assert.GreaterOrEqual(t, got["latencyMs"], 0.0)
		assert.Nil(t, got["error"])
		assert.NotNil(t, got["completedAt"])

		e := ge.waitExecution(t, res["executionId"].(string))
		assert.Equal(t, 1.0, e["total"])
		assert.Equal(t, 1.0, e["passed"])
		assert.Equal(t, 1.0, e["passRate"])
		assert.Equal(t, ec.Canvas.ID, e["promptId"])

		list := ge.Do(http.MethodGet, "/test-case?promptId="+ec.Canvas.ID+"&includeGenerations=true", ge.Viewer, nil)
		require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
		var cases []map[string]any
		list.JSON(t, &cases)
		require.Len(t, cases, 1)
		require.Len(t, cases[0]["generations"], 1, "the test case lists its generation")
		assert.Equal(t, genID, cases[0]["generations"].([]any)[0].(map[string]any)["id"])
	})
	t.Run("MessagesAndOtherVersion", func(t *testing.T) {
		withMsgs := ge.mustTestCase(t, ec.Canvas.ID, func(tc *testcase.TestCase) {
			tc.Messages = []testcase.Message{{Role: canvas.RoleUser, Content: "Hi"},
				{Role: canvas.RoleAssistant, Content: "Hello"}}
		})
		g := ge.waitGeneration(t, ge.runOne(t, withMsgs.ID, ec.Versions[1].ID)["generationId"].(string))
		assert.Equal(t, testcase.GenerationCompleted, g["status"])
		assert.Equal(t, "Prompt 2 for Ada\nHi\nHello", g["output"], "the test case's messages follow the version's")
		assert.Nil(t, g["passed"], "no expected output: not graded")
	})
	t.Run("FailedUnknownModel", func(t *testing.T) {
		v := ge.mustVersion(t, ec, "no-such-model", "Hello {{name}}")
		g := ge.waitGeneration(t, ge.runOne(t, tc.ID, v.ID)["generationId"].(string))
		assert.Equal(t, testcase.GenerationFailed, g["status"])
		assert.Equal(t, canvas.EINVALID, g["error"].(map[string]any)["code"])
		assert.Contains(t, g["error"].(map[string]any)["message"], "no-such-model")
		assert.Nil(t, g["output"])
		assert.Nil(t, g["passed"], "a failed generation is not graded")
	})
	t.Run("FailedMissingVariable", func(t *testing.T) {
		bare := ge.mustTestCase(t, ec.Canvas.ID, func(tc *testcase.TestCase) { tc.Variables = nil })
		g := ge.waitGeneration(t, ge.runOne(t, bare.ID, v1.ID)["generationId"].(string))
		assert.Equal(t, testcase.GenerationFailed, g["status"])
		assert.Equal(t, canvas.EINVALID, g["error"].(map[string]any)["code"])
		assert.Contains(t, g["error"].(map[string]any)["message"], "name")
	})
	t.Run("Errors", func(t *testing.T) {
		other := mustEnvCanvas(t, ge.testEnv, 1)
		run := func(token, tcID string, body any) *testResponse {
			return ge.Do(http.MethodPost, "/test-case/"+tcID+"/run", token, body)
		}
		for name, c := range map[string]struct {
			token, tcID string
			body        any
			status      int
		}{
			"UnknownTestCase":        {ge.Editor, uuid.NewString(), map[string]any{"promptVersionId": v1.ID}, http.StatusNotFound},
			"UnknownVersion":         {ge.Editor, tc.ID, map[string]any{"promptVersionId": uuid.NewString()}, http.StatusNotFound},
			"VersionOfAnotherCanvas": {ge.Editor, tc.ID, map[string]any{"promptVersionId": other.Versions[0].ID}, http.StatusNotFound},
			"MalformedTestCaseID":    {ge.Editor, "nope", map[string]any{"promptVersionId": v1.ID}, http.StatusUnprocessableEntity},
			"MalformedVersionID":     {ge.Editor, tc.ID, map[string]any{"promptVersionId": "nope"}, http.StatusUnprocessableEntity},
			"MissingVersionID":       {ge.Editor, tc.ID, map[string]any{}, http.StatusUnprocessableEntity},
			"Viewer":                 {ge.Viewer, tc.ID, map[string]any{"promptVersionId": v1.ID}, http.StatusForbidden},
			"Unauthorized":           {"", tc.ID, map[string]any{"promptVersionId": v1.ID}, http.StatusUnauthorized},
			"OtherWorkspace": {ge.KeyIn(mustWorkspace(t, ge.testEnv, "elsewhere"), canvas.RoleAdmin), tc.ID,
				map[string]any{"promptVersionId": v1.ID}, http.StatusNotFound},
		} {
			t.Run(name, func(t *testing.T) {
				r := run(c.token, c.tcID, c.body)
				require.Equal(t, c.status, r.Status, "%s", r.Body)
				readError(t, r)
			})
		}
		for name, path := range map[string]string{
			"GenerationUnknown":   "/test-case/generations/" + uuid.NewString(),
			"ExecutionUnknown":    "/test-case/executions/" + uuid.NewString(),
			"AbortUnknown":        "/test-case/generations/" + uuid.NewString() + "/abort",
			"GenerationMalformed": "/test-case/generations/nope",
			"ExecutionMalformed":  "/test-case/executions/nope",
		} {
			t.Run(name, func(t *testing.T) {
				method, want := http.MethodGet, http.StatusNotFound
				if len(path) > 6 && path[len(path)-6:] == "/abort" {
					method = http.MethodPost
				}
				if path[len(path)-5:] == "/nope" {
					want = http.StatusUnprocessableEntity
				}
				r := ge.Do(method, path, ge.Editor, nil)
				require.Equal(t, want, r.Status, "%s", r.Body)
				readError(t, r)
			})
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

func TestGeneration_Evaluators(t *testing.T) {
	ge := newGenerationEnv(t)
	ge.StartWorker(t, queue.WorkerOptions{})
	ec := mustEnvCanvas(t, ge.testEnv, 1)
	jsonVersion := ge.mustVersion(t, ec, "echo", `{"answer": "{{name}}"}`)
	schema := func(typ string) []byte {
		return []byte(`{"type":"object","required":["answer"],"properties":{"answer":{"type":"` + typ + `"}}}`)
	}
	cases := map[string]struct {
		version  *canvas.Version
		expected *string
		eval     *testcase.Evaluator
		want     any
	}{
		"ExactPass":      {ec.Versions[0], ptrTo("Prompt 1 for Ada"), nil, true},
		"ExactFail":      {ec.Versions[0], ptrTo("prompt 1 for ada"), nil, false},
		"ContainsPass":   {ec.Versions[0], ptrTo("for Ada"), &testcase.Evaluator{Type: testcase.EvaluatorContains}, true},
		"ContainsFail":   {ec.Versions[0], ptrTo("for Bob"), &testcase.Evaluator{Type: testcase.EvaluatorContains}, false},
		"RegexPass":      {ec.Versions[0], nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `^Prompt \d+ for A`}, true},
		"RegexFail":      {ec.Versions[0], nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `^for`}, false},
		"JSONSchemaPass": {jsonVersion, nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema("string")}, true},
		"JSONSchemaFail": {jsonVersion, nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema("integer")}, false},
		"NotJSONFails":   {ec.Versions[0], nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema("string")}, false},
		"Ungraded":       {ec.Versions[0], nil, nil, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := ge.mustTestCase(t, ec.Canvas.ID, func(tc *testcase.TestCase) {
				tc.ExpectedOutput, tc.Evaluator = c.expected, c.eval
			})
			g := ge.waitGeneration(t, ge.runOne(t, tc.ID, c.version.ID)["generationId"].(string))
			require.Equal(t, testcase.GenerationCompleted, g["status"], "%v", g["error"])
			assert.Equal(t, c.want, g["passed"], "output %q", g["output"])
		})
	}
}

// blockingModel answers nothing until its context ends; it says when a
// call starts and when it saw the cancellation.
type blockingModel struct {
	model.Provider
	started   chan struct{}
	cancelled chan struct{}
}

func (p *blockingModel) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	p.started <- struct{}{}
	<-ctx.Done()
	p.cancelled <- struct{}{}
	return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: "stopped", Err: ctx.Err()}
}

func TestGeneration_Abort(t *testing.T) {
	ge := newGenerationEnv(t)
	slow := &blockingModel{Provider: model.NewEcho(model.EchoOptions{}),
		started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
	ge.Providers.Register("slow", slow)
	// A lease far longer than the test: only the in-process fast path can
	// stop the model call before the first heartbeat.
	ge.StartWorker(t, queue.WorkerOptions{Lease: 10 * time.Minute})
	ec := mustEnvCanvas(t, ge.testEnv, 1)
	slowVersion := ge.mustVersion(t, ec, "slow", "Take your time, {{name}}")
	tc := ge.mustTestCase(t, ec.Canvas.ID, nil)

	t.Run("DuringModelCall", func(t *testing.T) {
		genID := ge.runOne(t, tc.ID, slowVersion.ID)["generationId"].(string)
		waitSignal(t, slow.started, "the model call never started")
		running := ge.Do(http.MethodGet, "/test-case/generations/"+genID, ge.Viewer, nil).Map(t)
		assert.Equal(t, testcase.GenerationRunning, running["status"])

		r := ge.Do(http.MethodPost, "/test-case/generations/"+genID+"/abort", ge.Editor, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, testcase.GenerationAborted, got["status"])
		assert.NotNil(t, got["completedAt"])
		waitSignal(t, slow.cancelled, "the model call was not cancelled")

		// Wait for the handler to return, then check nothing overwrote
		// aborted.
		require.Eventually(t, func() bool { return ge.worker.Load().Cancel(genID) == 0 },
			10*time.Second, 10*time.Millisecond)
		g := ge.Do(http.MethodGet, "/test-case/generations/"+genID, ge.Viewer, nil).Map(t)
		assert.Equal(t, testcase.GenerationAborted, g["status"])
		assert.Nil(t, g["output"])

		r = ge.Do(http.MethodPost, "/test-case/generations/"+genID+"/abort", ge.Editor, nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, readError(t, r).Code)
	})
	t.Run("Completed", func(t *testing.T) {
		genID := ge.runOne(t, tc.ID, ec.Versions[0].ID)["generationId"].(string)
		require.Equal(t, testcase.GenerationCompleted, ge.waitGeneration(t, genID)["status"])
		r := ge.Do(http.MethodPost, "/test-case/generations/"+genID+"/abort", ge.Editor, nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		readError(t, r)
	})
	t.Run("Forbidden", func(t *testing.T) {
		genID := ge.runOne(t, tc.ID, ec.Versions[0].ID)["generationId"].(string)
		r := ge.Do(http.MethodPost, "/test-case/generations/"+genID+"/abort", ge.Viewer, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		readError(t, r)
	})
}

func waitSignal(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		require.FailNow(t, msg)
	}
}

func TestGeneration_RunBatch(t *testing.T) {
	ge := newGenerationEnv(t)
	ge.StartWorker(t, queue.WorkerOptions{Concurrency: 8})
	ec := mustEnvCanvas(t, ge.testEnv, 2)

	t.Run("TwoHundred", func(t *testing.T) {
		batch := mustEnvCanvas(t, ge.testEnv, 1)
		ids := make([]string, 200)
		for i := range ids {
			name := fmt.Sprintf("user %d", i)
			want := "Prompt 1 for " + name
			if i%4 == 0 {
				want = "something else"
			}
			ids[i] = ge.mustTestCase(t, batch.Canvas.ID, func(tc *testcase.TestCase) {
				tc.Variables, tc.ExpectedOutput = map[string]any{"name": name}, &want
			}).ID
		}
		r := ge.Do(http.MethodPost, "/test-case/run", ge.Editor, map[string]any{
			"promptId": batch.Canvas.ID, "promptVersionId": batch.Versions[0].ID, "testCaseIds": ids})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		res := r.Map(t)
		assert.Len(t, res["testCaseIds"], 200)
		assert.Len(t, res["generationIds"], 200)
		assert.NotContains(t, res, "generationId", "a batch has no single generation")

		e := ge.waitExecution(t, res["executionId"].(string))
		assert.Equal(t, 200.0, e["total"])
		assert.Equal(t, map[string]any{"initializing": 0.0, "running": 0.0, "completed": 200.0, "failed": 0.0,
			"aborted": 0.0}, e["counts"])
		assert.Equal(t, 150.0, e["passed"])
		assert.Equal(t, 50.0, e["failed"])
		assert.Equal(t, 0.75, e["passRate"])

		gens, err := ge.Store.ListGenerations(context.Background(), testcase.GenerationFilter{
			WorkspaceID: ge.Workspace.ID, TestCaseIDs: ids})
		require.NoError(t, err)
		require.Len(t, gens, 200)
		for _, list := range gens {
			require.Len(t, list, 1)
			assert.True(t, list[0].Terminal(), "no generation stuck in %s", list[0].Status)
		}
	})
	t.Run("ByTags", func(t *testing.T) {
		ctx := context.Background()
		a := ge.mustTestCase(t, ec.Canvas.ID, nil)
		b := ge.mustTestCase(t, ec.Canvas.ID, nil)
		ge.mustTestCase(t, ec.Canvas.ID, nil)
		smoke := &testcase.Tag{Name: "smoke", Color: "red", PromptID: ec.Canvas.ID, WorkspaceID: ge.Workspace.ID}
		require.NoError(t, ge.Store.CreateTag(ctx, smoke))
		_, err := ge.Store.AddTags(ctx, ge.Workspace.ID, []string{a.ID, b.ID}, []string{smoke.ID})
		require.NoError(t, err)

		r := ge.Do(http.MethodPost, "/test-case/run", ge.Editor, map[string]any{
			"promptId": ec.Canvas.ID, "promptVersionId": ec.Versions[1].ID, "tagIds": []string{smoke.ID}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		res := r.Map(t)
		assert.ElementsMatch(t, []any{a.ID, b.ID}, res["testCaseIds"])
		e := ge.waitExecution(t, res["executionId"].(string))
		assert.Equal(t, 2.0, e["total"])
		assert.Equal(t, ec.Versions[1].ID, e["promptVersionId"])
		assert.Nil(t, e["passRate"], "nothing graded")

		r = ge.Do(http.MethodPost, "/test-case/run", ge.Editor, map[string]any{
			"promptId": ec.Canvas.ID, "promptVersionId": ec.Versions[0].ID})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Len(t, r.Map(t)["testCaseIds"], 3, "with no selection, every test case of the canvas runs")
	})
	t.Run("Errors", func(t *testing.T) {
		tc := ge.mustTestCase(t, ec.Canvas.ID, nil)
		other := mustEnvCanvas(t, ge.testEnv, 1)
		otherTC := ge.mustTestCase(t, other.Canvas.ID, nil)
		empty := mustEnvCanvas(t, ge.testEnv, 1)
		base := map[string]any{"promptId": ec.Canvas.ID, "promptVersionId": ec.Versions[0].ID}
		for name, c := range map[string]struct {
			token  string
			body   map[string]any
			status int
		}{
			"UnknownTestCase":      {ge.Editor, merged(base, map[string]any{"testCaseIds": []string{tc.ID, uuid.NewString()}}), http.StatusNotFound},
			"UnknownTag":           {ge.Editor, merged(base, map[string]any{"tagIds": []string{uuid.NewString()}}), http.StatusNotFound},
			"UnknownCanvas":        {ge.Editor, merged(base, map[string]any{"promptId": uuid.NewString()}), http.StatusNotFound},
			"VersionOfOther":       {ge.Editor, merged(base, map[string]any{"promptVersionId": other.Versions[0].ID}), http.StatusNotFound},
			"TestCaseOfOther":      {ge.Editor, merged(base, map[string]any{"testCaseIds": []string{otherTC.ID}}), http.StatusUnprocessableEntity},
			"Both":                 {ge.Editor, merged(base, map[string]any{"testCaseIds": []string{tc.ID}, "tagIds": []string{uuid.NewString()}}), http.StatusUnprocessableEntity},
			"EmptyIDs":             {ge.Editor, merged(base, map[string]any{"testCaseIds": []string{}}), http.StatusUnprocessableEntity},
			"MalformedID":          {ge.Editor, merged(base, map[string]any{"testCaseIds": []string{"nope"}}), http.StatusUnprocessableEntity},
			"MissingPromptID":      {ge.Editor, map[string]any{"promptVersionId": ec.Versions[0].ID}, http.StatusUnprocessableEntity},
			"NothingSelected":      {ge.Editor, map[string]any{"promptId": empty.Canvas.ID, "promptVersionId": empty.Versions[0].ID}, http.StatusUnprocessableEntity},
			"Viewer":               {ge.Viewer, base, http.StatusForbidden},
			"ProjectRestrictedKey": {ge.Key(canvas.RoleEditor, uuid.NewString()), base, http.StatusForbidden},
		} {
			t.Run(name, func(t *testing.T) {
				r := ge.Do(http.MethodPost, "/test-case/run", c.token, c.body)
				require.Equal(t, c.status, r.Status, "%s", r.Body)
				readError(t, r)
			})
		}
	})
}
