package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
)

// TestConsole_Includes drives includes in a real browser: a version's
// page shows its include tags as links to the included canvas and its
// prompt resolved (by the server for a served version, as the includes
// resolve now for one not served), the editor shows the includes it is
// given and previews the prompt resolved, and the included canvas's page
// lists the versions that include it.
func TestConsole_Includes(t *testing.T) {
	execPath := findChromium(t)
	w := newIncludeWorld(t)
	safety := w.canvas("Safety")
	w.publish(safety, "production", w.mustVersion(safety, "Be safe."))
	persona := w.canvas("Persona")
	served := w.mustVersion(persona, "You are kind. {{> "+safety+"}}")
	w.publish(persona, "production", served)
	draft := w.mustVersion(persona, "Draft: {{>"+safety+"@v1 }} end")

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(w.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), w.Editor+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav-canvases`)),
		chromedp.Navigate(w.URL+"/console#/versions/"+served),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="include-tag"]`)),
	)
	tag := `document.querySelector('[data-testid="messages"] [data-testid="include-tag"]')`
	assert.Equal(t, "#/canvases/"+safety, browserRun(t, b, chromedp.Evaluate[string](tag+`.getAttribute("href")`)))
	assert.Equal(t, "{{> "+safety+"}}", browserRun(t, b, chromedp.Evaluate[string](tag+`.textContent`)))
	assert.Contains(t, browserRun(t, b, chromedp.Evaluate[string](tag+`.title`)), "Safety")
	assert.Equal(t, "Safety as production serves it", pageText(t, b, `[data-testid="version-includes"] li`))
	waitUntil(t, b, `!!document.querySelector('[data-testid="version-resolved-messages"]')`)
	assert.Equal(t, "As production serves it.", pageText(t, b, `[data-testid="version-resolved-source"]`))
	assert.Equal(t, "You are kind. Be safe.", pageText(t, b, `[data-testid="version-resolved-messages"] pre`))

	// A version no environment serves is resolved in the page.
	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/versions/"+draft),
	)
	waitUntil(t, b, `(document.querySelector('[data-testid="version-resolved-source"]') || {}).textContent === "Not served: as its includes resolve now."`)
	assert.Equal(t, "Draft: Be safe. end", pageText(t, b, `[data-testid="version-resolved-messages"] pre`))
	assert.Equal(t, "Safety at version 1", pageText(t, b, `[data-testid="version-includes"] li`))

	// The editor shows the includes of what is typed and previews the
	// prompt resolved; a cycle is named.
	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/versions/"+draft+"/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="msg-includes"] [data-testid="include-tag"]`)),
	)
	assert.Equal(t, "Safety at version 1", pageText(t, b, `[data-testid="editor-includes-list"] li`))
	setFieldValue(t, b, `[data-testid="msg-content"]`, "Hi. {{> "+safety+"@production}} {{> "+safety+"@v1}}")
	waitUntil(t, b, `document.querySelectorAll('[data-testid="msg-includes"] [data-testid="include-tag"]').length === 2`)
	assert.Equal(t, 2, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="editor-includes-list"] li').length`)))
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="editor-preview-button"]`)))
	waitUntil(t, b, `!!document.querySelector('[data-testid="editor-preview-messages"]')`)
	assert.Equal(t, "Hi. Be safe. Be safe.", pageText(t, b, `[data-testid="editor-preview-messages"] pre`))
	setFieldValue(t, b, `[data-testid="msg-content"]`, "Me: {{> "+persona+"}}")
	b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="editor-preview-button"]`)))
	waitUntil(t, b, `!!document.querySelector('[data-testid="editor-preview"] [data-testid="error"]')`)
	assert.Contains(t, pageText(t, b, `[data-testid="editor-preview"] [data-testid="error"]`), "a cycle")

	// The included canvas lists the versions that include it.
	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/canvases/"+safety),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="dependents-table"]`)),
	)
	rows := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="dependents-table"] tbody tr')].map(tr => [...tr.cells].map(c => c.textContent).join(" | ")).sort()`))
	assert.Equal(t, []string{"Persona | #1 | as production serves it", "Persona | #2 | version 1"}, rows)
	assert.Equal(t, "#/versions/"+draft, browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="dependent-version-`+draft+`"]').getAttribute("href")`)))
	b.Do(t,
		chromedp.Navigate(w.URL+"/console#/canvases/"+persona),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="dependents-table-empty"]`)),
	)
	assert.Equal(t, "No other canvas includes this one.", pageText(t, b, `[data-testid="dependents-table-empty"]`))
	assert.Empty(t, b.Errors())
}
