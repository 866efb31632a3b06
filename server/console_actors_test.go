package server_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsole_ActorNames checks that pages show who did something by
// name: a version made with a named key shows the key's name, with the
// key's id in the title, on the canvas page and on the version page; an
// unnamed key stays shown by its id.
func TestConsole_ActorNames(t *testing.T) {
	execPath := findChromium(t)
	w := newIncludeWorld(t)
	created := w.Do(http.MethodPost, "/api-keys", w.Admin, map[string]any{"role": "editor", "name": "ci-bot"})
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	key := created.Map(t)
	actorID := "key:" + key["id"].(string)
	c := w.canvas("Named")
	res := w.Do(http.MethodPost, "/prompt-version", key["token"].(string), map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Hi."}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	named := res.Map(t)["id"].(string)
	unnamed := w.mustVersion(c, "Hello.")
	unnamedBy := w.Do(http.MethodGet, "/prompt-version/"+unnamed, w.Viewer, nil).Map(t)["createdBy"].(string)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(w.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), w.Viewer+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav-canvases`)),
		chromedp.Navigate(w.URL+"/console#/canvases/"+c),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions-table"]`)),
	)
	cell := func(versionID string) string {
		return `document.querySelector('[data-testid="version-link-` + versionID + `"]').closest("tr").querySelector("span.actor")`
	}
	waitUntil(t, b, cell(named)+`.textContent === "ci-bot"`)
	assert.Equal(t, actorID, browserRun(t, b, chromedp.Evaluate[string](cell(named)+`.title`)))
	assert.Equal(t, unnamedBy, browserRun(t, b, chromedp.Evaluate[string](cell(unnamed)+`.textContent`)), "a key without a name is shown by its id")
	assert.Equal(t, unnamedBy, browserRun(t, b, chromedp.Evaluate[string](cell(unnamed)+`.title`)))

	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/versions/"+named),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="version-title"]`)),
	)
	waitUntil(t, b, `[...document.querySelectorAll('[data-testid="version"] span.actor')].every(el => el.textContent === "ci-bot" && el.title === `+jsQuote(actorID)+`)`)
	assert.Equal(t, 2, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="version"] span.actor').length`)))
	assert.Empty(t, b.Errors())
}
