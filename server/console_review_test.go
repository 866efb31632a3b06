package server_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsole_Review drives a canvas's Review page in a real browser over
// a real engine: the sampled live runs are listed (a playground run is
// not), one is marked good with a score and a comment in place and made
// into a test case with its output as expected output, another is marked
// bad, and the counts per version follow.
func TestConsole_Review(t *testing.T) {
	execPath := findChromium(t)
	e := newLiveEnv(t)
	ec := mustEnvCanvas(t, e, 1)
	c, v := ec.Canvas.ID, ec.Versions[0].ID
	r := e.Do(http.MethodPatch, "/prompt/"+c, e.Editor, map[string]any{"inferencesPercentage": "100"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	ada := mustComplete(t, e, ec, 1, "Ada")
	bob := mustComplete(t, e, ec, 1, "Bob")
	items := map[string]string{}
	var page reviewPage
	r = e.Do(http.MethodGet, "/review-queue?promptId="+c, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &page)
	for _, it := range page.Data {
		items[it.RunID] = it.ID
	}
	require.Len(t, items, 2)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console#/canvases/"+c+"/playground/version/"+v),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#playground-run`)),
	)

	t.Run("PlaygroundRunIsNotSampled", func(t *testing.T) {
		setFieldValue(t, b, `#var-0`, "Cy")
		b.Do(t, chromedp.Click(chromedp.CSS(`#playground-run`)))
		waitUntil(t, b, `document.getElementById("playground-status").dataset.state === "done" && !document.getElementById("playground-stats").hidden`)
		runID := pageText(t, b, `#playground-run-link`)
		require.NotEmpty(t, runID)
		r := e.Do(http.MethodGet, "/review-queue?promptId="+c, e.Viewer, nil)
		var after reviewPage
		r.JSON(t, &after)
		assert.Equal(t, 2, after.Meta.TotalCount, "the playground's run %s is a preview", runID)
	})

	t.Run("ListPending", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+c),
			chromedp.WaitVisible(chromedp.CSS(`#open-review`)),
			chromedp.Click(chromedp.CSS(`#open-review`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-items"]`)),
		)
		runs := browserRun(t, b, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("[data-testid=review-items] article")].map(a => a.dataset.run)`))
		assert.ElementsMatch(t, []string{ada, bob}, runs)
		assert.Equal(t, "2 items", pageText(t, b, `[data-testid="review-total"]`))
		assert.Contains(t, pageText(t, b, `[data-testid="review-output-`+items[ada]+`"]`), "Ada")
		assert.Equal(t, "2", pageText(t, b, `[data-testid="stats-pending-`+v+`"]`))
	})

	t.Run("AnnotateInPlace", func(t *testing.T) {
		id := items[ada]
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="review-save-`+id+`"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="review-result-`+id+`"]').dataset.state === "failed"`)

		setSelect(t, b, "review-passed-"+id, "true")
		setFieldValue(t, b, `#review-score-`+id, "0.9")
		setFieldValue(t, b, `#review-comment-`+id, "Warm and short")
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="review-save-`+id+`"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="review-result-`+id+`"]').dataset.state === "saved"`)
		assert.Equal(t, "reviewed", pageText(t, b, `[data-testid="review-state-`+id+`"]`))

		other := items[bob]
		setSelect(t, b, "review-passed-"+other, "false")
		setFieldValue(t, b, `#review-score-`+other, "0.1")
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="review-save-`+other+`"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="review-result-`+other+`"]').dataset.state === "saved"`)

		got := e.Do(http.MethodGet, "/review-queue/"+id, e.Viewer, nil).Map(t)
		a := got["annotation"].(map[string]any)
		assert.Equal(t, true, a["passed"])
		assert.Equal(t, 0.9, a["score"])
		assert.Equal(t, "Warm and short", a["comment"])
	})

	t.Run("MakeTestCase", func(t *testing.T) {
		id := items[ada]
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="review-testcase-`+id+`"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="review-result-`+id+`"]').dataset.state === "test-case"`)
		tcID := pageText(t, b, `[data-testid="review-testcase-link-`+id+`"]`)
		tc := e.Do(http.MethodGet, "/test-case/"+tcID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, tc.Status, "%s", tc.Body)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+ada, e.Viewer, nil).Map(t)
		output := run["result"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(map[string]any)["text"]
		assert.Equal(t, output, tc.Map(t)["expectedOutput"])
		assert.Equal(t, map[string]any{"name": "Ada"}, tc.Map(t)["variables"])
	})

	t.Run("ReviewedAndStats", func(t *testing.T) {
		b.Do(t, chromedp.Navigate(e.URL+"/console#/canvases/"+c+"/review/reviewed"))
		// The page is rendered again at once, so the filter tells the new
		// page from the one before.
		waitUntil(t, b, `(document.getElementById("review-status") || {}).value === "reviewed" &&
			document.querySelectorAll("[data-testid=review-items] article").length === 2`)
		assert.Equal(t, "1", pageText(t, b, `[data-testid="stats-good-`+v+`"]`))
		assert.Equal(t, "1", pageText(t, b, `[data-testid="stats-bad-`+v+`"]`))
		assert.Equal(t, "0.50", pageText(t, b, `[data-testid="stats-mean-`+v+`"]`))
		assert.Equal(t, "0", pageText(t, b, `[data-testid="stats-pending-`+v+`"]`))
		setSelect(t, b, "review-status", "pending")
		waitUntil(t, b, `!!document.querySelector('[data-testid="review-empty"]')`)
		assert.Empty(t, b.Errors(), "the page logs no error")
	})
}
