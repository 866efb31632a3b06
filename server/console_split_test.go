package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsole_Split drives a split in a real browser: the environment
// page edits a split whose weights must sum to 100, publishes it, and
// shows the results of each variant; a run shows its variant and its
// feedback.
func TestConsole_Split(t *testing.T) {
	execPath := findChromium(t)
	w := newSplitWorld(t)
	b := newBrowser(t, execPath)
	rows := `[data-testid="env-production-split-rows"] tr`
	b.Do(t,
		chromedp.Navigate(w.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), w.Editor+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav-canvases`)),
		chromedp.Navigate(w.URL+"/console#/canvases/"+w.canvasID+"/environments"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-split-toggle"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-split-toggle"]`)),
		chromedp.WaitVisible(chromedp.CSS(rows+` .split-weight`)),
	)
	setRow := func(n int, versionID, weight string) {
		t.Helper()
		sel := fmt.Sprintf(`%s:nth-child(%d)`, rows, n)
		browserRun(t, b, chromedp.Evaluate[bool](`(() => { const s = document.querySelector(`+jsQuote(sel+` .split-version`)+`);
			s.value = `+jsQuote(versionID)+`; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`))
		setFieldValue(t, b, sel+` .split-weight`, weight)
	}
	sum := `[data-testid="env-production-split-sum"]`
	setRow(1, w.v1, "60")
	setRow(2, w.v2, "30")
	waitUntil(t, b, `document.querySelector(`+jsQuote(sum)+`).textContent === "The weights sum to 90, not 100."`)
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="env-production-split-publish"]`)))
	assert.Equal(t, 404, w.readAs("").Status, "a split that does not sum to 100 is not sent")

	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="env-production-split-add"]`)))
	setRow(3, w.v3, "10")
	waitUntil(t, b, `document.querySelector(`+jsQuote(sum)+`).textContent === "The weights sum to 100."`)
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="env-production-split-publish"]`)))
	waitUntil(t, b, `(document.querySelector("#environments-result") || {}).textContent === "Published a split to production."`)
	hist := w.Do("GET", "/environment/versions?resourceType=prompt&resourceId="+w.canvasID+"&envName=production", w.Viewer, nil)
	require.Equal(t, http.StatusOK, hist.Status)
	active := hist.Map(t)["data"].([]any)[0].(map[string]any)
	assert.Equal(t, split(w.v1, 60.0, w.v2, 30.0, w.v3, 10.0), active["split"])
	waitUntil(t, b, `document.querySelector('[data-testid="split-`+active["publicationId"].(string)+`"]').textContent.includes("60/30/10")`)

	// Runs of the split, one with feedback; the page shows them per variant.
	var rated string
	for i := range 20 {
		res := w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": w.canvasID, "assignment_key": fmt.Sprintf("u%d", i)})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		if res.Map(t)["versionId"] == w.v1 && rated == "" {
			rated = res.Map(t)["id"].(string)
		}
	}
	require.NotEmpty(t, rated)
	fb := w.Do("POST", "/v2/chat/completions/"+rated+"/feedback", w.Editor, map[string]any{"score": 0.5, "comment": "ok-ish"})
	require.Equal(t, http.StatusOK, fb.Status, "%s", fb.Body)
	stats := w.Do("GET", "/environment/split-stats?resourceType=prompt&resourceId="+w.canvasID+"&envName=production", w.Viewer, nil).Map(t)
	var want []string
	for _, v := range stats["variants"].([]any) {
		want = append(want, fmt.Sprint(v.(map[string]any)["runs"]))
	}
	b.Do(t,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-split-stats"]`)),
	)
	got := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="env-production-split-stats"] tbody tr')].map(tr => tr.cells[3].textContent)`))
	assert.Equal(t, want, got, "runs per variant")
	assert.Equal(t, "0.50 (1)", browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="env-production-split-stats"] tbody tr').cells[7].textContent`)))

	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/runs/completion/"+rated),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="crun-variant"]`)),
	)
	assert.Equal(t, "0 of the split", pageText(t, b, `[data-testid="crun-variant"]`))
	assert.Equal(t, "score 0.5 — ok-ish", pageText(t, b, `[data-testid="crun-feedback"]`))
	assert.Empty(t, b.Errors())
}
