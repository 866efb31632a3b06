package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// experimentScreenshot is the experiment page TestConsole_Experiments
// writes into docs/ when CANVAS_UPDATE_SCREENSHOT=1.
const experimentScreenshot = "../docs/console-experiment.png"

// experimentsEchoDelay is the echo model's pause between two words: a
// short answer takes a fraction of a second, a long one many seconds, so
// that an experiment over it is seen running and can be cancelled.
const experimentsEchoDelay = 50 * time.Millisecond

// newExperimentsEnv starts the server over an engine whose background
// work runs (experiments included) until the test ends, with the echo
// model pausing between words.
func newExperimentsEnv(t *testing.T) *testEnv {
	t.Helper()
	var eng *engine.Engine
	e := newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		eng, err = engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL,
			Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{Delay: experimentsEchoDelay})),
			Limits:    engine.Limits{AllowPrivateNetworks: true, MaxFileSize: testMaxSize}})
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

// TestConsole_Experiments drives a canvas's Experiments tab in a real
// browser over a real engine on the echo model: an experiment over two
// versions is started from the form (tagged test cases, an exact
// evaluator and a saved one; evaluator problems refused at their fields
// first), watched to its end, its totals read beside the live review
// counts, its side-by-side table filtered, a regressing case annotated in
// place with the totals following, and a slow experiment over an
// environment cancelled while it runs.
func TestConsole_Experiments(t *testing.T) {
	execPath := findChromium(t)
	e := newExperimentsEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	c, v1, v2 := ec.Canvas.ID, ec.Versions[0].ID, ec.Versions[1].ID

	// A sampled live run puts one pending item of v1 in the review queue.
	r := e.Do(http.MethodPatch, "/prompt/"+c, e.Editor, map[string]any{"inferencesPercentage": "100"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	mustComplete(t, e, ec, 1, "Live")

	// The echo answers "Prompt <n> for <name>": the first case passes on
	// v1 only (a regression of v2), the second on v2 only, the third on
	// neither; the fourth has no tag and is left out.
	tag := mustCreate(t, e, "/test-case-tags", e.Editor, map[string]any{"name": "greet", "promptId": c})["id"].(string)
	newCase := func(title, name, expected string) string {
		return mustCreate(t, e, "/test-case", e.Editor, map[string]any{"promptId": c, "title": title,
			"variables": map[string]any{"name": name}, "expectedOutput": expected})["id"].(string)
	}
	regress := newCase("regresses", "Ada", "Prompt 1 for Ada")
	improve := newCase("improves", "Bob", "Prompt 2 for Bob")
	same := newCase("fails on both", "Cy", "Nobody")
	newCase("untagged", "Dee", "Prompt 1 for Dee")
	r = e.Do(http.MethodPost, "/test-case/bulk-add-tags", e.Editor, map[string]any{"testCaseIds": []string{regress, improve, same}, "tagIds": []string{tag}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	mustCreate(t, e, "/evaluators", e.Editor, map[string]any{"promptId": c, "name": "mentions", "type": "regex", "pattern": " for "})

	// A third version answers slowly, and the environment "slow" serves it.
	slow := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": strings.Repeat("slowly ", 400)}})["id"].(string)
	ec.mustCreateEnv(t, "slow")
	r = e.Do(http.MethodPost, "/environment/publish", e.Editor, map[string]any{"resourceType": "prompt", "resourceId": c, "envName": "slow", "versionId": slow})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console#/canvases/"+c),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#open-experiments`)),
		chromedp.Click(chromedp.CSS(`#open-experiments`)),
		chromedp.WaitVisible(chromedp.CSS(`#exp-form`)),
	)
	assert.Equal(t, "No experiments yet.", pageText(t, b, `[data-testid="experiments-table-empty"]`))

	var id string
	t.Run("RefusedAtTheirFields", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#exp-version-`+v1)),
			chromedp.Click(chromedp.CSS(`#exp-version-`+v2)),
			chromedp.Click(chromedp.CSS(`[data-testid="exp-tag-greet"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="exp-saved-mentions"]`)),
			chromedp.Click(chromedp.CSS(`#exp-add-evaluator`)),
			chromedp.WaitVisible(chromedp.CSS(`#exp-eval-1-type`)),
		)
		setSelect(t, b, "exp-eval-1-type", "regex")
		assert.Equal(t, "regex", browserRun(t, b, chromedp.Value(chromedp.CSS(`#exp-eval-1-name`))), "the name follows the type")
		setFieldValue(t, b, `#exp-eval-1-pattern`, "(")
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-start`)))
		waitUntil(t, b, `document.getElementById("exp-eval-1-pattern-error").textContent !== ""`)
		assert.Equal(t, "exp-eval-1-pattern", browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.id`)), "the field in error takes the focus")

		setSelect(t, b, "exp-eval-1-type", "webhook")
		assert.False(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("exp-eval-1-pattern").checkVisibility()`)), "a regex's field is hidden for a webhook")
		setFieldValue(t, b, `#exp-eval-1-url`, "https://example.com/evaluate")
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-start`)))
		waitUntil(t, b, `document.getElementById("exp-eval-1-secret-error").textContent !== ""`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-eval-1-secret-generate`)))
		assert.True(t, strings.HasPrefix(browserRun(t, b, chromedp.Value(chromedp.CSS(`#exp-eval-1-secret`))), "whsec_"))

		setSelect(t, b, "exp-eval-1-type", "llm-judge")
		setFieldValue(t, b, `#exp-eval-1-judge-model`, "echo")
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-start`)))
		waitUntil(t, b, `document.getElementById("exp-eval-1-rubric-error").textContent !== ""`)
		assert.Empty(t, pageText(t, b, `#exp-eval-1-pattern-error`), "the problems of a start replace those of the one before")

		r := e.Do(http.MethodGet, "/experiments?promptId="+c, e.Viewer, nil)
		assert.Contains(t, string(r.Body), `"totalCount":0`, "nothing was started")
	})

	t.Run("StartAndWatch", func(t *testing.T) {
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-eval-1-remove`)))
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-start`)))
		waitUntil(t, b, `location.hash.startsWith("#/experiments/")`)
		id = strings.TrimPrefix(browserRun(t, b, chromedp.Evaluate[string](`location.hash`)), "#/experiments/")
		waitUntil(t, b, `!!document.querySelector('#exp-status[data-status="completed"]') && !!document.querySelector('[data-testid="exp-compare"]')`)
		assert.Equal(t, "6 of 6 results", pageText(t, b, `[data-testid="exp-progress-text"]`), "3 tagged test cases × 2 versions")
		assert.Equal(t, "exact (exact), mentions (regex, saved)", pageText(t, b, `[data-testid="exp-evaluators-used"]`))
		assertNoNull(t, b)

		x := e.Do(http.MethodGet, "/experiments/"+id, e.Viewer, nil).Map(t)
		req := x["request"].(map[string]any)
		assert.ElementsMatch(t, []any{v1, v2}, req["versionIds"])
		assert.Equal(t, []any{tag}, req["tagIds"])
		assert.Len(t, req["evaluators"], 2, "exact and the saved one")
	})

	t.Run("TotalsBesideReview", func(t *testing.T) {
		for _, v := range []string{v1, v2} {
			assert.Equal(t, "1", pageText(t, b, `[data-testid="exp-passed-`+v+`"]`))
			assert.Equal(t, "2", pageText(t, b, `[data-testid="exp-failed-`+v+`"]`))
			assert.Equal(t, "0", pageText(t, b, `[data-testid="exp-errored-`+v+`"]`))
			assert.Equal(t, "33 %", pageText(t, b, `[data-testid="exp-passrate-`+v+`"]`))
			assert.Equal(t, "0.33", pageText(t, b, `[data-testid="exp-score-`+v+`-exact"]`))
			assert.Equal(t, "1.00", pageText(t, b, `[data-testid="exp-score-`+v+`-mentions"]`))
			assert.NotEqual(t, "0", pageText(t, b, `[data-testid="exp-tokens-`+v+`"]`))
			assert.Contains(t, pageText(t, b, `[data-testid="exp-latency-`+v+`"]`), " ms")
		}
		assert.Equal(t, "1 pending, 0 good, 0 bad", pageText(t, b, `[data-testid="exp-review-`+v1+`"]`))
		assert.Equal(t, "—", pageText(t, b, `[data-testid="exp-review-`+v2+`"]`))
	})

	t.Run("Histograms", func(t *testing.T) {
		counts := func(v string) []string {
			return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="exp-histogram-`+v+`"] rect')].map(r => r.dataset.count)`))
		}
		assert.Equal(t, []string{"2", "0", "0", "0", "0", "0", "0", "0", "0", "1"}, counts(v1), "exact: two 0s and one 1")
		setSelect(t, b, "exp-hist-evaluator", "mentions")
		assert.Equal(t, []string{"0", "0", "0", "0", "0", "0", "0", "0", "0", "3"}, counts(v2), "every output mentions \" for \"")
		setSelect(t, b, "exp-hist-evaluator", "exact")
	})

	t.Run("SideBySideAndFilters", func(t *testing.T) {
		assert.Equal(t, v1, browserRun(t, b, chromedp.Value(chromedp.CSS(`#exp-baseline`))), "the oldest version is the baseline")
		assert.Equal(t, v2, browserRun(t, b, chromedp.Value(chromedp.CSS(`#exp-candidate`))))
		assert.Equal(t, "1 regression", pageText(t, b, `[data-testid="exp-regressions"]`))
		assert.Equal(t, "1 improvement", pageText(t, b, `[data-testid="exp-improvements"]`))
		assert.Equal(t, "1 unchanged", pageText(t, b, `[data-testid="exp-unchanged"]`))
		pairs := func() []string {
			return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="exp-compare"] tbody tr')].map(tr => tr.dataset.testid + "|" + tr.dataset.change)`))
		}
		assert.ElementsMatch(t, []string{"exp-pair-" + regress + "-1|regression", "exp-pair-" + improve + "-1|improvement",
			"exp-pair-" + same + "-1|unchanged"}, pairs())
		row := pageText(t, b, `[data-testid="exp-pair-`+regress+`-1"]`)
		assert.Contains(t, row, "Prompt 1 for Ada", "the expected output and the baseline's output")
		assert.Contains(t, row, "Prompt 2 for Ada", "the candidate's output")

		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-filter-regressions`)))
		assert.Equal(t, []string{"exp-pair-" + regress + "-1|regression"}, pairs())
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-filter-regressions`)), chromedp.Click(chromedp.CSS(`#exp-filter-failed`)))
		assert.ElementsMatch(t, []string{"exp-pair-" + regress + "-1|regression", "exp-pair-" + same + "-1|unchanged"}, pairs())
		b.Do(t, chromedp.Click(chromedp.CSS(`#exp-filter-failed`)))
		assert.Len(t, pairs(), 3)

		setSelect(t, b, "exp-baseline", v2)
		setSelect(t, b, "exp-candidate", v1)
		waitUntil(t, b, `(document.querySelector('[data-testid="exp-pair-`+regress+`-1"]') || {dataset: {}}).dataset.change === "improvement"`)
		setSelect(t, b, "exp-baseline", v1)
		setSelect(t, b, "exp-candidate", v2)
		waitUntil(t, b, `(document.querySelector('[data-testid="exp-pair-`+regress+`-1"]') || {dataset: {}}).dataset.change === "regression"`)
	})

	t.Run("LinksToRuns", func(t *testing.T) {
		var page struct{ Data []map[string]any }
		e.Do(http.MethodGet, "/experiments/"+id+"/results?versionId="+v2+"&testCaseId="+regress, e.Viewer, nil).JSON(t, &page)
		require.Len(t, page.Data, 1)
		rid, runID := page.Data[0]["id"].(string), page.Data[0]["runId"].(string)
		href := browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="exp-run-`+rid+`"]').getAttribute("href")`))
		assert.Equal(t, "#/runs/completion/"+runID, href)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+runID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
	})

	t.Run("AnnotateInPlace", func(t *testing.T) {
		var page struct{ Data []map[string]any }
		e.Do(http.MethodGet, "/experiments/"+id+"/results?versionId="+v2+"&testCaseId="+regress, e.Viewer, nil).JSON(t, &page)
		rid := page.Data[0]["id"].(string)
		browserRun(t, b, chromedp.Evaluate[bool](`(() => { document.querySelector('[data-testid="exp-ann-form-`+rid+`"]').closest("details").open = true; return true; })()`))
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="exp-ann-save-`+rid+`"]`)))
		assert.Equal(t, "Choose pass or fail.", pageText(t, b, `[data-testid="exp-ann-result-`+rid+`"]`))

		setSelect(t, b, "exp-ann-passed-"+rid, "true")
		setFieldValue(t, b, `#exp-ann-score-`+rid, "1")
		setFieldValue(t, b, `#exp-ann-comment-`+rid, "Fine by me")
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="exp-ann-save-`+rid+`"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="exp-regressions"]').textContent === "0 regressions" &&
			document.querySelector('[data-testid="exp-passed-`+v2+`"]').textContent === "2"`)
		assert.Equal(t, "67 %", pageText(t, b, `[data-testid="exp-passrate-`+v2+`"]`))
		assert.Equal(t, "1.00", pageText(t, b, `[data-testid="exp-score-`+v2+`-human"]`))
		assert.Equal(t, "33 %", pageText(t, b, `[data-testid="exp-passrate-`+v1+`"]`), "the other version's totals stay")
		assert.Equal(t, "unchanged", browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="exp-pair-`+regress+`-1"]').dataset.change`)))
		assert.Equal(t, "annotated pass", pageText(t, b, `[data-testid="exp-annotated-`+rid+`"]`))

		got := e.Do(http.MethodGet, "/experiments/"+id+"/results?versionId="+v2+"&testCaseId="+regress, e.Viewer, nil)
		got.JSON(t, &page)
		a := page.Data[0]["annotation"].(map[string]any)
		assert.Equal(t, true, a["passed"])
		assert.Equal(t, 1.0, a["score"])
		assert.Equal(t, "Fine by me", a["comment"])
		screenshot(t, b, experimentScreenshot)
	})

	t.Run("CancelWhileRunning", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="exp-back"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="experiment-link-`+id+`"]`)),
			chromedp.Click(chromedp.CSS(`#exp-target-environments`)),
			chromedp.Click(chromedp.CSS(`#exp-env-slow`)),
			chromedp.Click(chromedp.CSS(`#exp-start`)),
		)
		waitUntil(t, b, `!!document.querySelector('#exp-status[data-status="running"]') && !!document.getElementById("exp-cancel")`)
		slowID := strings.TrimPrefix(browserRun(t, b, chromedp.Evaluate[string](`location.hash`)), "#/experiments/")
		assert.Contains(t, pageText(t, b, `[data-testid="exp-totals"]`), "from slow", "the environment resolved to its version")
		// The page is read again every second: the button is found and
		// pressed in one step.
		browserRun(t, b, chromedp.Evaluate[bool](`(() => { document.getElementById("exp-cancel").click(); return true; })()`))
		waitUntil(t, b, `!!document.querySelector('#exp-status[data-status="cancelled"]')`)
		assertNoNull(t, b)
		x := e.Do(http.MethodGet, "/experiments/"+slowID, e.Viewer, nil).Map(t)
		assert.Equal(t, "cancelled", x["status"])
		assert.Equal(t, slow, x["versions"].([]any)[0].(map[string]any)["versionId"])

		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="exp-back"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="experiment-link-`+slowID+`"]`)),
		)
		statuses := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="experiments-table"] tbody tr')].map(tr => tr.cells[1].textContent)`))
		assert.Equal(t, []string{"cancelled", "completed"}, statuses, "newest first")
	})

	// The browser logs each refused request; the three starts the test
	// provoked are the only errors.
	var unexpected []string
	for _, msg := range b.Errors() {
		if !strings.Contains(msg, "status of 422 (Unprocessable Entity)") || !strings.HasSuffix(msg, "/experiments") {
			unexpected = append(unexpected, msg)
		}
	}
	assert.Empty(t, unexpected, "the page logs no other error")
}
