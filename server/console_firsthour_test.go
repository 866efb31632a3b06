package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsole_FirstHour drives what a new user meets first, in a real
// browser over a real engine: the console opens on Canvases and then on
// the last page visited; a version's State follows a publication without
// a reload; run pages and the runs list name canvases and versions; a
// streamed run says so; counts are in the singular when there is one;
// generation output wraps between words; and a test case's variables are
// edited through the form of a version's variables, graded by any grader
// with its parameters.
func TestConsole_FirstHour(t *testing.T) {
	execPath := findChromium(t)
	e := newLiveEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	c, v1, v2 := ec.Canvas.ID, ec.Versions[0].ID, ec.Versions[1].ID
	// A third version declares a variable of each type but file.
	v3 := mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{"promptId": c,
		"configuration": map[string]any{"model": "echo"},
		"variables": []map[string]any{{"name": "name", "type": "text", "required": true}, {"name": "count", "type": "number"},
			{"name": "formal", "type": "boolean"}, {"name": "extra", "type": "json"}},
		"message": map[string]any{"role": "system", "content": "Hi {{name}}"}})["id"].(string)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
	)

	t.Run("OpensOnCanvases", func(t *testing.T) {
		waitUntil(t, b, `!!document.querySelector('[data-testid="canvases-count"]')`)
		assert.Equal(t, "#/canvases", browserRun(t, b, chromedp.Evaluate[string](`location.hash`)))
		assert.Equal(t, "1 canvas", pageText(t, b, `[data-testid="canvases-count"]`))
		assert.Equal(t, "page", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("nav-canvases").getAttribute("aria-current")`)))
	})

	t.Run("OpensOnLastPage", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-runs`)),
			chromedp.WaitVisible(chromedp.CSS(`#runs-filters`)),
			chromedp.Navigate(e.URL+"/console"),
			chromedp.WaitVisible(chromedp.CSS(`#runs-filters`)),
		)
		assert.Equal(t, "/runs", browserRun(t, b, chromedp.Evaluate[string](`localStorage.getItem("promptcanvas.lastPage")`)))
		assert.Equal(t, "page", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("nav-runs").getAttribute("aria-current")`)))
	})

	t.Run("VersionStateFollowsPublication", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/versions/"+v2),
			chromedp.WaitVisible(chromedp.CSS(`#version-publish`)),
		)
		assert.Equal(t, "—", pageText(t, b, `[data-testid="version-state"]`))
		setSelect(t, b, "version-publish-env", "production")
		b.Do(t, chromedp.Click(chromedp.CSS(`#version-publish`)))
		waitUntil(t, b, `document.querySelector('[data-testid="version-state"]').textContent.includes("promoted")`)
		assert.Contains(t, pageText(t, b, `[data-testid="version-state"]`), "served by production")
		assert.Equal(t, "Published to production.", pageText(t, b, `[data-testid="version-action-result"]`))
	})

	t.Run("RunPagesNameCanvasAndVersion", func(t *testing.T) {
		run := mustComplete(t, e, ec, 1, "Ada")
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs/completion/"+run),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="crun-mode"]`)),
		)
		assert.Equal(t, "Support bot", pageText(t, b, `[data-testid="crun-canvas"]`))
		assert.Equal(t, "#/canvases/"+c, browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="crun-canvas"]').getAttribute("href")`)))
		assert.Equal(t, "#1 v1", pageText(t, b, `[data-testid="crun-version"]`))
		assert.Equal(t, "#/versions/"+v1, browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="crun-version"]').getAttribute("href")`)))
		assert.Equal(t, "synchronous", pageText(t, b, `[data-testid="crun-mode"]`))

		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-version-`+run+`"]`)),
		)
		assert.Equal(t, "#1 v1", pageText(t, b, `[data-testid="run-version-`+run+`"]`), "the list names the version, not its id")
		assertNoNull(t, b)
	})

	t.Run("StreamedRunSaysSo", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+c+"/playground/version/"+v1),
			chromedp.WaitVisible(chromedp.CSS(`#playground-run`)),
		)
		require.True(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("playground-stream").checked`)))
		setFieldValue(t, b, `#var-0`, "Cy")
		b.Do(t, chromedp.Click(chromedp.CSS(`#playground-run`)))
		waitUntil(t, b, `document.getElementById("playground-status").dataset.state === "done" && !document.getElementById("playground-stats").hidden`)
		run := pageText(t, b, `#playground-run-link`)
		require.NotEmpty(t, run)
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs/completion/"+run),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="crun-mode"]`)),
		)
		assert.Equal(t, "streamed", pageText(t, b, `[data-testid="crun-mode"]`))
		assert.Equal(t, true, e.Do(http.MethodGet, "/v2/chat/completions/"+run, e.Viewer, nil).Map(t)["stream"])
	})

	var dee string
	t.Run("TestCaseVariablesForm", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/test-cases/"+c),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form`)),
		)
		assert.Equal(t, v3, browserRun(t, b, chromedp.Value(chromedp.CSS(`#tc-vars-version`))), "the newest version's variables to start with")
		names := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#tc-variables [name]")].map(i => i.name + ":" + i.type)`))
		assert.Equal(t, []string{"name:text", "count:number", "formal:checkbox", "extra:textarea"}, names)

		b.Do(t, chromedp.SendKeys(chromedp.CSS(`#tc-title`), "Dee, formally"))
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `document.querySelector('[data-testid="tc-var-error-name"]').textContent !== ""`)
		assert.Equal(t, "name is required.", pageText(t, b, `[data-testid="tc-var-error-name"]`))
		assert.Equal(t, "tc-var-0", browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.id`)), "the field in error takes the focus")

		setFieldValue(t, b, `#tc-var-0`, "Dee")
		setFieldValue(t, b, `#tc-var-1`, "3")
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-var-2`)))
		setFieldValue(t, b, `#tc-var-3`, `{"tone": "warm"`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `document.querySelector('[data-testid="tc-var-error-extra"]').textContent !== ""`)
		assert.Empty(t, listTestCases(t, e, c), "nothing is saved while a field is wrong")
		setFieldValue(t, b, `#tc-var-3`, `{"tone": "warm"}`)
		setFieldValue(t, b, `#tc-variables-extra`, `{"legacy": 1}`)
		setFieldValue(t, b, `#tc-expected`, "Hi Dee")
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `(document.querySelector('#tc-form-result') || {dataset: {}}).dataset.state === "saved"`)
		cases := listTestCases(t, e, c)
		require.Len(t, cases, 1)
		dee = cases[0]["id"].(string)
		assert.Equal(t, map[string]any{"name": "Dee", "count": 3.0, "formal": true, "extra": map[string]any{"tone": "warm"}, "legacy": 1.0},
			cases[0]["variables"])

		// Editing starts on the values saved; a version without some of
		// them keeps them as JSON.
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="tc-edit-`+dee+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#tc-form[data-editing="`+dee+`"]`)),
		)
		assert.Equal(t, "Dee", browserRun(t, b, chromedp.Value(chromedp.CSS(`#tc-var-0`))))
		assert.True(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("tc-var-2").checked`)))
		setSelect(t, b, "tc-vars-version", v1)
		assert.Equal(t, "Dee", browserRun(t, b, chromedp.Value(chromedp.CSS(`#tc-var-0`))), "a value is kept by name")
		extra := browserRun(t, b, chromedp.Value(chromedp.CSS(`#tc-variables-extra`)))
		assert.Contains(t, extra, `"tone": "warm"`)
		assert.Contains(t, extra, `"legacy": 1`)
	})

	t.Run("EveryGrader", func(t *testing.T) {
		types := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.getElementById("tc-evaluator").options].map(o => o.value)`))
		assert.Equal(t, []string{"exact", "contains", "regex", "json-schema", "json-equal", "similarity"}, types)
		visible := func(id string) bool {
			return browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById(`+jsString(id)+`).checkVisibility()`))
		}
		save := func() {
			t.Helper()
			b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
			waitUntil(t, b, `(document.querySelector('#tc-form-result') || {dataset: {}}).dataset.state === "saved"`)
			b.Do(t,
				chromedp.Click(chromedp.CSS(`[data-testid="tc-edit-`+dee+`"]`)),
				chromedp.WaitVisible(chromedp.CSS(`#tc-form[data-editing="`+dee+`"]`)),
			)
		}
		evaluator := func() any {
			r := e.Do(http.MethodGet, "/test-case/"+dee, e.Viewer, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			return r.Map(t)["evaluator"]
		}

		setSelect(t, b, "tc-evaluator", "regex")
		assert.True(t, visible("tc-pattern"))
		assert.False(t, visible("tc-schema"))
		assert.False(t, visible("tc-threshold"))
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `document.getElementById("tc-pattern-error").textContent !== ""`)
		setFieldValue(t, b, `#tc-pattern`, `(`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `document.getElementById("tc-pattern-error").textContent !== "" && document.getElementById("tc-form-result").dataset.state === "error"`)
		setFieldValue(t, b, `#tc-pattern`, `^Hi \w+$`)
		save()
		assert.Equal(t, map[string]any{"type": "regex", "pattern": `^Hi \w+$`}, evaluator())
		assert.Equal(t, `^Hi \w+$`, browserRun(t, b, chromedp.Value(chromedp.CSS(`#tc-pattern`))), "editing shows the pattern saved")

		setSelect(t, b, "tc-evaluator", "json-schema")
		assert.True(t, visible("tc-schema"))
		setFieldValue(t, b, `#tc-schema`, `{"type": `)
		b.Do(t, chromedp.Click(chromedp.CSS(`#tc-save`)))
		waitUntil(t, b, `document.getElementById("tc-schema-error").textContent.startsWith("The schema is not valid JSON")`)
		setFieldValue(t, b, `#tc-schema`, `{"type": "object", "required": ["reply"]}`)
		save()
		assert.Equal(t, map[string]any{"type": "json-schema", "schema": map[string]any{"type": "object", "required": []any{"reply"}}}, evaluator())

		setSelect(t, b, "tc-evaluator", "similarity")
		assert.True(t, visible("tc-threshold"))
		setFieldValue(t, b, `#tc-threshold`, "0.6")
		save()
		assert.Equal(t, map[string]any{"type": "similarity", "threshold": 0.6}, evaluator())

		for _, g := range []string{"json-equal", "contains"} {
			setSelect(t, b, "tc-evaluator", g)
			save()
			assert.Equal(t, map[string]any{"type": g}, evaluator())
		}
		setSelect(t, b, "tc-evaluator", "exact")
		save()
		assert.Nil(t, evaluator(), "exact is the default")
	})

	t.Run("OutputWrapsBetweenWords", func(t *testing.T) {
		long := strings.TrimSpace(strings.Repeat("internationalization responsibilities acknowledgement ", 12))
		id := mustCreate(t, e, "/test-case", e.Editor, map[string]any{"promptId": c, "title": "long",
			"variables": map[string]any{"name": long}, "expectedOutput": "Prompt 1 for " + long})["id"].(string)
		// The page shows the test cases as they were: it is read again.
		b.Do(t,
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="tc-run-`+id+`"]`)),
		)
		setSelect(t, b, "tc-version", v1)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="tc-run-`+id+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="tc-execution-summary"][data-done="true"]`)),
		)
		assert.Contains(t, pageText(t, b, `[data-testid="tc-execution-summary"]`), ": 1 test case, 1 passed")
		// Each word of the output lies on one line, and the output takes
		// several lines.
		got := browserRun(t, b, chromedp.Evaluate[[]int](`(() => {
			const pre = document.querySelector('[data-testid="tc-execution-table"] [data-testid="gen-output"]');
			const node = pre.firstChild;
			const re = /\S+/g;
			let split = 0, m;
			const lines = new Set();
			while ((m = re.exec(node.textContent))) {
				const r = document.createRange();
				r.setStart(node, m.index);
				r.setEnd(node, m.index + m[0].length);
				const rects = [...r.getClientRects()].filter((x) => x.width > 0);
				if (rects.length > 1) split++;
				if (rects.length) lines.add(Math.round(rects[0].top));
			}
			return [split, lines.size];
		})()`))
		require.Len(t, got, 2)
		assert.Zero(t, got[0], "no word is broken across lines")
		assert.Greater(t, got[1], 2, "the output wraps")
	})

	// The browser logs the refused regex the test provoked; it is the
	// only error.
	var unexpected []string
	for _, msg := range b.Errors() {
		if !strings.Contains(msg, "status of 422 (Unprocessable Entity)") || !strings.Contains(msg, "/test-case/"+dee) {
			unexpected = append(unexpected, msg)
		}
	}
	assert.Empty(t, unexpected, "the page logs no other error")
}
