package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// The console screenshots of the runs list, a workflow run's graph, the
// test cases page and the API keys page, written when
// CANVAS_UPDATE_SCREENSHOT=1, relative to the server package.
const (
	runsScreenshot      = "../docs/console-runs.png"
	graphScreenshot     = "../docs/console-run-graph.png"
	testCasesScreenshot = "../docs/console-test-cases.png"
	keysScreenshot      = "../docs/console-api-keys.png"
)

// newLiveEnv starts the server over an engine, as canvasd builds it, whose
// background work runs (async completions, tasks, workflow runs, test case
// generations), until the test ends.
func newLiveEnv(t *testing.T) *testEnv {
	t.Helper()
	var eng *engine.Engine
	e := newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		eng, err = engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL,
			Limits: engine.Limits{AllowPrivateNetworks: true, MaxFileSize: testMaxSize}})
		require.NoError(t, err)
		*o = server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db})}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		require.NoError(t, eng.Close())
	})
	return e
}

// screenshot writes the page, 1366 pixels wide, to path when
// CANVAS_UPDATE_SCREENSHOT=1.
func screenshot(t *testing.T, b *browserTab, path string) {
	t.Helper()
	if os.Getenv("CANVAS_UPDATE_SCREENSHOT") != "1" {
		return
	}
	png := browserRun(t, b, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Clean(path), png, 0o644))
}

// setSelect chooses value in a select and fires its change event, as a
// person choosing with the keyboard does.
func setSelect(t *testing.T, b *browserTab, id, value string) {
	t.Helper()
	ok := browserRun(t, b, chromedp.Evaluate[bool](`(() => { const s = document.getElementById(`+jsString(id)+`);
		s.value = `+jsString(value)+`; s.dispatchEvent(new Event("change", {bubbles: true})); return s.value === `+jsString(value)+`; })()`))
	require.True(t, ok, "select %s has the option %s", id, value)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// poll waits until the JavaScript expression is true.
func poll(t *testing.T, b *browserTab, expr string) {
	t.Helper()
	browserRun(t, b, chromedp.Poll[bool](expr))
}

// rowIDs returns the data-id of the run list's rows, in order.
func rowIDs(t *testing.T, b *browserTab) []string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#runs-rows tr")].map(tr => tr.dataset.id)`))
}

// waitRunStatus polls a workflow run until it has status.
func waitRunStatus(t *testing.T, e *testEnv, id, status string) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		r := e.Do(http.MethodGet, "/workflow/runs/"+id, e.Viewer, nil)
		run = r.Map(t)
		return r.Status == http.StatusOK && run["status"] == status
	}, 20*time.Second, 20*time.Millisecond, "run %s reaches %s", id, status)
	return run
}

// TestConsole_RunsTestCasesFilesKeys drives the Runs, Test cases, Files,
// API keys and Projects pages in a real browser over a real engine.
func TestConsole_RunsTestCasesFilesKeys(t *testing.T) {
	execPath := findChromium(t)
	e := newLiveEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	v1, v2 := ec.Versions[0].ID, ec.Versions[1].ID
	first := mustComplete(t, e, ec, 1, "Ada")
	second := mustComplete(t, e, ec, 1, "Bob")
	third := mustComplete(t, e, ec, 2, "Cy")
	task := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hello"})
	require.Equal(t, http.StatusAccepted, task.Status, "%s", task.Body)
	taskID := task.Map(t)["id"].(string)

	flows := mustCreate(t, e, "/prompt", e.Admin, map[string]any{"title": "Flows", "projectId": ec.Project.ID})["id"].(string)
	flowVersion := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": flows, "workflowSpec": reviewSpec})["id"].(string)
	wfRun := mustCreate(t, e, "/workflow/runs", e.Editor, map[string]any{"versionId": flowVersion,
		"input": map[string]any{"name": "Ada"}})["id"].(string)
	waiting := waitRunStatus(t, e, wfRun, workflow.StatusWaitingForReview)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console#/runs"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Admin),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="all-runs-table"]`)),
	)

	t.Run("RunsList", func(t *testing.T) {
		assert.ElementsMatch(t, []string{first, second, third, taskID, wfRun}, rowIDs(t, b),
			"three completions, a task and a workflow run")
		assert.Equal(t, wfRun, rowIDs(t, b)[0], "newest first: the workflow run was started last")
		kinds := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#runs-rows tr")].map(tr => tr.dataset.kind)`))
		assert.ElementsMatch(t, []string{"workflow", "task", "completion", "completion", "completion"}, kinds)
		assertNoNull(t, b)
		screenshot(t, b, runsScreenshot)

		setSelect(t, b, "runs-kind", "completion")
		setSelect(t, b, "runs-canvas", ec.Canvas.ID)
		b.Do(t, chromedp.WaitEnabled(chromedp.CSS(`#runs-version`)))
		setSelect(t, b, "runs-version", v2)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#runs-apply`)),
		)
		poll(t, b, `document.querySelectorAll("#runs-rows tr").length === 1`)
		assert.Equal(t, []string{third}, rowIDs(t, b), "the completion of v2 only")

		setSelect(t, b, "runs-version", "")
		setSelect(t, b, "runs-kind", "")
		setSelect(t, b, "runs-canvas", "")
		setSelect(t, b, "runs-filter-status", workflow.StatusWaitingForReview)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#runs-apply`)),
		)
		poll(t, b, `document.querySelectorAll("#runs-rows tr").length === 1`)
		assert.Equal(t, []string{wfRun}, rowIDs(t, b), "only the run waiting for review")

		setSelect(t, b, "runs-filter-status", "")
		b.Do(t,
			chromedp.SetValue(chromedp.CSS(`#runs-since`), time.Now().Add(24*time.Hour).Format("2006-01-02T15:04")),
			chromedp.Click(chromedp.CSS(`#runs-apply`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="all-runs-empty"]`)),
		)
		b.Do(t,
			chromedp.SetValue(chromedp.CSS(`#runs-since`), ""),
			chromedp.SetValue(chromedp.CSS(`#runs-until`), time.Now().Add(24*time.Hour).Format("2006-01-02T15:04")),
			chromedp.Click(chromedp.CSS(`#runs-apply`)),
		)
		poll(t, b, `document.querySelectorAll("#runs-rows tr").length === 5`)
	})

	t.Run("CompletionRunDetail", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="run-row-link-`+first+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#crun-output`)),
		)
		assert.Equal(t, "Prompt 1 for Ada", browserRun(t, b, chromedp.Text(chromedp.CSS(`#crun-output`))))
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="crun-messages"]`))), "Prompt 1 for Ada",
			"the rendered messages")
		assert.Equal(t, "completed", browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#crun-status`), "data-status")).Value)
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="crun-usage"]`))), "input tokens")
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="crun-latency"]`))), "ms")
		assertNoNull(t, b)
	})

	t.Run("WorkflowRunGraph", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs/"+wfRun),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-graph"]`)),
		)
		var steps []string
		for _, s := range waiting["steps"].([]any) {
			steps = append(steps, s.(map[string]any)["id"].(string))
		}
		nodes := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="run-graph"] g[data-node]')].map(g => g.dataset.node)`))
		assert.ElementsMatch(t, steps, nodes, "one SVG node per step")
		graph := waiting["graph"].(map[string]any)
		edges := browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="run-graph"] path.graph-edge').length`))
		assert.Equal(t, len(graph["edges"].([]any)), edges, "one SVG edge per graph edge")
		depths := browserRun(t, b, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-testid="run-graph"] g[data-node]')].map(g => [g.dataset.node, g.dataset.depth]))`))
		assert.Equal(t, "0", depths["start"], "the input node is the first layer")
		assert.Equal(t, "1", depths["draft"])
		assert.Equal(t, "2", depths["check"], "a node is one layer past its predecessor")
		status := browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`[data-testid="graph-node-check"]`), "data-status"))
		assert.Equal(t, workflow.StatusWaitingForReview, status.Value, "a node shows its step's status")
		screenshot(t, b, graphScreenshot)

		// A node is reached with the keyboard: Enter shows its step, and
		// the page stays the run's.
		b.Do(t,
			chromedp.Focus(chromedp.CSS(`[data-testid="graph-node-draft"]`)),
			chromedp.KeyEvent("\r"),
		)
		poll(t, b, `document.activeElement && document.activeElement.id === "step-draft"`)
		assert.Equal(t, "#/runs/"+wfRun, browserRun(t, b, chromedp.Evaluate[string](`location.hash`)))

		b.Do(t,
			chromedp.Click(chromedp.CSS(`#run-cancel`)),
			chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="cancelled"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-graph"]`)),
		)
		assertNoNull(t, b)
	})

	t.Run("TestCases", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-test-cases`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="tc-choose"]`)),
		)
		setSelect(t, b, "tc-canvas", ec.Canvas.ID)
		b.Do(t,
			chromedp.WaitVisible(chromedp.CSS(`#tc-title`)),
			chromedp.SendKeys(chromedp.CSS(`#tc-title`), "Greets Ada"),
			chromedp.SetValue(chromedp.CSS(`#tc-var-0`), "Ada"),
			chromedp.SendKeys(chromedp.CSS(`#tc-expected`), "Prompt 2 for Ada"),
			chromedp.SendKeys(chromedp.CSS(`#tc-new-tag`), "smoke"),
			chromedp.Click(chromedp.CSS(`#tc-save`)),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form-result[data-state="saved"]`)),
		)
		cases := listTestCases(t, e, ec.Canvas.ID)
		require.Len(t, cases, 1)
		ada := cases[0]
		assert.Equal(t, "Greets Ada", ada["title"])
		assert.Equal(t, map[string]any{"name": "Ada"}, ada["variables"])
		assert.Equal(t, []string{"smoke"}, tagNames(ada))

		adaID := ada["id"].(string)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="tc-edit-`+adaID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form[data-editing="`+adaID+`"]`)),
			chromedp.SetValue(chromedp.CSS(`#tc-title`), "Greets Ada by name"),
			chromedp.SendKeys(chromedp.CSS(`#tc-new-tag`), "greetings"),
			chromedp.Click(chromedp.CSS(`#tc-save`)),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form-result[data-state="saved"]`)),
		)
		ada = listTestCases(t, e, ec.Canvas.ID)[0]
		assert.Equal(t, "Greets Ada by name", ada["title"])
		assert.ElementsMatch(t, []string{"smoke", "greetings"}, tagNames(ada))
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="tc-row-`+adaID+`"]`))), "greetings")

		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#tc-title`), "Greets Bob"),
			chromedp.SetValue(chromedp.CSS(`#tc-var-0`), "Bob"),
			chromedp.SendKeys(chromedp.CSS(`#tc-expected`), "Prompt 2 for Bob"),
			chromedp.Click(chromedp.CSS(`[data-testid="tc-tag-smoke"]`)),
			chromedp.Click(chromedp.CSS(`#tc-save`)),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form-result[data-state="saved"]`)),
		)
		require.Len(t, listTestCases(t, e, ec.Canvas.ID), 2)

		// One test case against v2: it passes, its output beside the
		// expected output.
		setSelect(t, b, "tc-version", v2)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="tc-run-`+adaID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="tc-execution-summary"][data-done="true"]`)),
		)
		rows := generationRows(t, b)
		require.Len(t, rows, 1)
		assert.Equal(t, []string{"true", "Prompt 2 for Ada", "Prompt 2 for Ada"}, rows[0])
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="tc-row-`+adaID+`"]`))), "passed",
			"the list shows the latest result")

		// The smoke tag's set against v1: both fail, each output beside
		// what was expected.
		smoke := tagID(t, e, ec.Canvas.ID, "smoke")
		setSelect(t, b, "tc-version", v1)
		setSelect(t, b, "tc-run-tag-select", smoke)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#tc-run-set`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="tc-execution-summary"][data-done="true"]`)),
		)
		rows = generationRows(t, b)
		assert.ElementsMatch(t, [][]string{
			{"false", "Prompt 1 for Ada", "Prompt 2 for Ada"},
			{"false", "Prompt 1 for Bob", "Prompt 2 for Bob"},
		}, rows)
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="tc-execution-summary"]`))), "2 test cases, 0 passed, 2 failed")
		assert.Equal(t, 3, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="tc-generations"] tbody tr').length`)),
			"every generation of the canvas's test cases")
		screenshot(t, b, testCasesScreenshot)
		assertNoNull(t, b)
	})

	t.Run("Files", func(t *testing.T) {
		fileID := (&world{e: &fullEnv{testEnv: e}}).NewFile(t)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-files`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="file-`+fileID+`"]`)),
		)
		row := browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="file-`+fileID+`"]').closest("tr").textContent`))
		assert.Contains(t, row, "notes.txt")
		assert.Contains(t, row, "uploaded")
		assert.Contains(t, row, "12 B")
		assertNoNull(t, b)
	})

	t.Run("APIKeys", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-api-keys`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="keys-table"]`)),
		)
		setSelect(t, b, "key-role", "editor")
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="key-project-`+ec.Project.ID+`"]`)),
			chromedp.Click(chromedp.CSS(`#key-create`)),
			chromedp.WaitVisible(chromedp.CSS(`#key-token`)),
		)
		token := browserRun(t, b, chromedp.Text(chromedp.CSS(`#key-token`)))
		require.True(t, canvas.IsAPIKeyToken(token), token)
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, "/prompt", token, nil).Status, "the shown token works")
		key, err := e.Store.GetAPIKeyByHash(context.Background(), canvas.HashToken(token))
		require.NoError(t, err)
		assert.Equal(t, canvas.RoleEditor, key.Role)
		assert.Equal(t, []string{ec.Project.ID}, key.Projects)
		screenshot(t, b, keysScreenshot)

		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-projects`)),
			chromedp.WaitVisible(chromedp.CSS(`#project-name`)),
			chromedp.Click(chromedp.CSS(`#nav-api-keys`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="revoke-`+key.ID+`"]`)),
		)
		assert.Zero(t, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll("#key-token").length`)), "the token is shown once")
		body := browserRun(t, b, chromedp.Evaluate[string](`document.body.textContent`))
		assert.NotContains(t, body, token)

		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="revoke-`+key.ID+`"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="confirm-revoke-`+key.ID+`"]`)),
		)
		poll(t, b, `(document.querySelector('[data-testid="key-`+key.ID+`"]') || {closest: () => null}).closest("tr")?.textContent.includes("revoked")`)
		row := browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="key-`+key.ID+`"]').closest("tr").textContent`))
		assert.Contains(t, row, "revoked")
		assert.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, "/prompt", token, nil).Status, "a revoked key is refused")
		assertNoNull(t, b)
	})

	t.Run("Projects", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-projects`)),
			chromedp.WaitVisible(chromedp.CSS(`#project-name`)),
			chromedp.SendKeys(chromedp.CSS(`#project-name`), "Research"),
			chromedp.Click(chromedp.CSS(`#project-create`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="project-result"][data-state="saved"]`)),
		)
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="projects-table"]`))), "Research")
		r := e.Do(http.MethodGet, "/projects", e.Admin, nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Contains(t, string(r.Body), `"name":"Research"`)
		assertNoNull(t, b)
	})

	assert.Empty(t, b.Errors(), "the page logs no errors")
}

// assertNoNull fails when the view shows "null" or "undefined" anywhere.
func assertNoNull(t *testing.T, b *browserTab) {
	t.Helper()
	shown := browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
	assert.NotContains(t, shown, "null")
	assert.NotContains(t, shown, "undefined")
}

// listTestCases reads a canvas's test cases through the API.
func listTestCases(t *testing.T, e *testEnv, canvasID string) []map[string]any {
	t.Helper()
	r := e.Do(http.MethodGet, "/test-case?promptId="+canvasID, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var cases []map[string]any
	r.JSON(t, &cases)
	return cases
}

// tagID returns the id of a canvas's tag by name.
func tagID(t *testing.T, e *testEnv, canvasID, name string) string {
	t.Helper()
	r := e.Do(http.MethodGet, "/test-case-tags?promptId="+canvasID, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var tags []map[string]any
	r.JSON(t, &tags)
	for _, tag := range tags {
		if tag["name"] == name {
			return tag["id"].(string)
		}
	}
	t.Fatalf("no tag %q", name)
	return ""
}

// generationRows returns the execution table's rows as [passed, output,
// expected output].
func generationRows(t *testing.T, b *browserTab) [][]string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[[][]string](`[...document.querySelectorAll('[data-testid="tc-execution-table"] tbody tr')]
		.map(tr => [tr.dataset.passed, tr.querySelector('[data-testid="gen-output"]').textContent, tr.querySelector('[data-testid="gen-expected"]').textContent])`))
}
