package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// promptScreenshots are the pages TestConsole_Prompts writes into docs/
// when CANVAS_UPDATE_SCREENSHOT=1, relative to the server package.
var promptScreenshots = struct{ Canvas, Version, Editor, Diff, Environments, Playground string }{
	Canvas:       "../docs/console-canvas.png",
	Version:      "../docs/console-version.png",
	Editor:       "../docs/console-editor.png",
	Diff:         "../docs/console-diff.png",
	Environments: "../docs/console-environments.png",
	Playground:   "../docs/console-playground.png",
}

// promptsEchoDelay is the echo model's pause between two streamed words: long
// enough for the page to show a part of the answer before the rest.
const promptsEchoDelay = 60 * time.Millisecond

// newPromptsEnv starts a server over an engine as canvasd builds it, on a
// real SQLite database, with the echo model streaming word by word. Upload
// URLs name another host than the page's, as behind a proxy: the console
// sends the bytes to its own origin.
func newPromptsEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		e, err := engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL,
			Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{Delay: promptsEchoDelay}))})
		require.NoError(t, err)
		*o = server.Options{Engine: e, Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db})}
	})
}

// waitUntil waits until the JavaScript expression is true in the page.
func waitUntil(t *testing.T, b *browserTab, expr string) {
	t.Helper()
	browserRun(t, b, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second)))
}

// pageText returns the text of the first element sel selects.
func pageText(t *testing.T, b *browserTab, sel string) string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[string](`(document.querySelector(`+jsQuote(sel)+`) || {}).textContent || ""`))
}

// jsQuote quotes s as a JavaScript string.
func jsQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// setFieldValue sets a form field's value and tells the page, as typing would.
func setFieldValue(t *testing.T, b *browserTab, sel, value string) {
	t.Helper()
	browserRun(t, b, chromedp.Evaluate[bool](`(() => { const el = document.querySelector(`+jsQuote(sel)+`);
		el.value = `+jsQuote(value)+`; el.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`))
}

// writeScreenshot writes the page to path when CANVAS_UPDATE_SCREENSHOT=1.
func writeScreenshot(t *testing.T, b *browserTab, path string) {
	t.Helper()
	if os.Getenv("CANVAS_UPDATE_SCREENSHOT") != "1" {
		return
	}
	png := browserRun(t, b, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Clean(path), png, 0o644))
}

// envHistoryRows reads an environment's history table as "title|active" rows.
func envHistoryRows(t *testing.T, b *browserTab, testid string) []string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="`+testid+`"] tbody tr')]
		.map(tr => tr.cells[1].textContent + "|" + tr.cells[5].textContent)`))
}

// TestConsole_Prompts drives the prompt work in a real browser, on a 1366×768
// screen, keyboard first where a person would use it: sign in, create a
// canvas and a version with a required variable, a second version from it
// (messages added, reordered and removed, variables of every type, the
// structured output schema refused before save), compare the two, create a
// custom environment (the name refused as it is typed), publish, promote,
// roll back, and run in the playground with a file, the answer streamed.
// The page's environment name rules are checked against the server's, and
// its line diff on edge cases.
func TestConsole_Prompts(t *testing.T) {
	execPath := findChromium(t)
	e := newPromptsEnv(t)
	projectID := mustProjectID(t, e, "Support team")

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
	)

	t.Run("SignInPageHasNoNavigation", func(t *testing.T) {
		hidden := browserRun(t, b, chromedp.Evaluate[[]bool](`["nav", "sign-out"].map(id => document.getElementById(id).offsetParent === null)`))
		assert.Equal(t, []bool{true, true}, hidden, "the navigation and Sign out are not shown before signing in")
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor+kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`#nav-canvases`)),
			chromedp.WaitVisible(chromedp.CSS(`#sign-out`)),
		)
	})

	var canvasID, v1, v2 string
	t.Run("CreateCanvas", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-canvases`)),
			chromedp.WaitVisible(chromedp.CSS(`#new-canvas-title`)),
			chromedp.SendKeys(chromedp.CSS(`#new-canvas-title`), "Greeter"+kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="canvas-title"]`)),
		)
		assert.Equal(t, "Greeter", pageText(t, b, `[data-testid="canvas-title"]`))
		loc := browserRun(t, b, chromedp.Location())
		canvasID = loc[strings.LastIndex(loc, "/")+1:]
		got := e.Do(http.MethodGet, "/prompt/"+canvasID, e.Editor, nil)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
		assert.Equal(t, projectID, got.Map(t)["projectId"], "the canvas is in the project chosen")

		mustCanvas(t, e, projectID, "Billing helper")
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-canvases`)),
			chromedp.WaitVisible(chromedp.CSS(`#canvas-search`)),
			chromedp.SendKeys(chromedp.CSS(`#canvas-search`), "greet"),
		)
		waitUntil(t, b, `document.querySelectorAll('[data-testid="canvases-table"] tbody tr').length === 1`)
		assert.Contains(t, pageText(t, b, `[data-testid="canvases-table"] tbody`), "Greeter")
		assert.Equal(t, "1 of 2", pageText(t, b, `#canvases-count`))

		// Focus moves with Tab and shows where it is.
		b.Do(t, chromedp.KeyEvent(kb.Tab))
		outline := browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.matches(":focus-visible") ? getComputedStyle(document.activeElement).outlineStyle : "not focus-visible"`))
		assert.Equal(t, "solid", outline, "the focused element is outlined")
	})

	t.Run("CreateVersion", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="canvas-link-`+canvasID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#new-version`)),
			chromedp.Click(chromedp.CSS(`#new-version`)),
			chromedp.WaitVisible(chromedp.CSS(`#editor-form`)),
			chromedp.SendKeys(chromedp.CSS(`#editor-title`), "Greeting v1"),
		)
		setFieldValue(t, b, `#editor-messages li:nth-child(1) .msg-content`, "You are a friendly greeter.\nGreet {{name}} warmly.\nEnd with a smile.")
		waitUntil(t, b, `document.getElementById("editor-placeholders").textContent.includes("Not declared: name")`)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#add-variable`)),
			chromedp.SendKeys(chromedp.CSS(`#editor-variables tr:nth-child(1) .var-name`), "name"),
			chromedp.Click(chromedp.CSS(`#editor-variables tr:nth-child(1) .var-required`)),
			chromedp.SendKeys(chromedp.CSS(`#editor-variables tr:nth-child(1) .var-description`), "Who to greet"),
		)
		assert.NotContains(t, pageText(t, b, `#editor-placeholders`), "Not declared")
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#save-version`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="version-title"]`)),
		)
		assert.Equal(t, "Greeting v1", pageText(t, b, `[data-testid="version-title"]`))
		loc := browserRun(t, b, chromedp.Location())
		v1 = loc[strings.LastIndex(loc, "/")+1:]
		assert.Equal(t, "#1", pageText(t, b, `[data-testid="version-index"]`))
		assert.Contains(t, pageText(t, b, `[data-testid="messages"]`), "Greet {{name}} warmly.")
		vars := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="variables-table"] tbody tr')].map(tr => [...tr.cells].slice(0, 4).map(c => c.textContent).join("|"))`))
		assert.Equal(t, []string{"name|text|required|Who to greet"}, vars)
		assert.Equal(t, "echo", pageText(t, b, `[data-testid="config-model"]`))

		got := e.Do(http.MethodGet, "/prompt-version/"+v1, e.Editor, nil)
		require.Equal(t, http.StatusOK, got.Status)
		var v struct {
			Variables []map[string]any `json:"variables"`
			Messages  []map[string]any `json:"messages"`
		}
		got.JSON(t, &v)
		require.Len(t, v.Variables, 1)
		assert.Equal(t, true, v.Variables[0]["required"])
		require.Len(t, v.Messages, 1)
		assert.Equal(t, "system", v.Messages[0]["role"])
		writeScreenshot(t, b, promptScreenshots.Version)
	})

	t.Run("NewVersionFromIt", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#new-from-version`)),
			chromedp.WaitVisible(chromedp.CSS(`#editor-form`)),
		)
		assert.Equal(t, "Greeting v1 (copy)", browserRun(t, b, chromedp.Value(chromedp.CSS(`#editor-title`))))
		setFieldValue(t, b, `#editor-title`, "Greeting v2")
		setFieldValue(t, b, `#editor-messages li:nth-child(1) .msg-content`, "You are a friendly greeter.\nGreet {{name}} warmly, in a few words.\nEnd with a smile.")
		// Two messages added; the second moved above the first, then removed.
		b.Do(t, chromedp.Click(chromedp.CSS(`#add-message`)), chromedp.Click(chromedp.CSS(`#add-message`)))
		setFieldValue(t, b, `#editor-messages li:nth-child(2) .msg-content`, "Count {{count}}, formal {{formal}}, meta {{meta}}.\nNotes: {{notes}}")
		setFieldValue(t, b, `#editor-messages li:nth-child(3) .msg-content`, "Hi!")
		b.Do(t,
			chromedp.SetValue(chromedp.CSS(`#editor-messages li:nth-child(3) .msg-role`), "assistant"),
			chromedp.Click(chromedp.CSS(`#editor-messages li:nth-child(3) .msg-up`)),
		)
		order := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#editor-messages li")].map(li => li.querySelector(".msg-role").value + ":" + li.querySelector(".msg-content").value.split("\n")[0])`))
		assert.Equal(t, []string{"system:You are a friendly greeter.", "assistant:Hi!", "user:Count {{count}}, formal {{formal}}, meta {{meta}}."}, order)
		b.Do(t, chromedp.Click(chromedp.CSS(`#editor-messages li:nth-child(2) .msg-remove`)))

		for i, v := range [][2]string{{"count", "number"}, {"formal", "boolean"}, {"meta", "json"}, {"notes", "file"}} {
			row := `#editor-variables tr:nth-child(` + string(rune('2'+i)) + `)`
			b.Do(t,
				chromedp.Click(chromedp.CSS(`#add-variable`)),
				chromedp.SendKeys(chromedp.CSS(row+` .var-name`), v[0]),
				chromedp.SetValue(chromedp.CSS(row+` .var-type`), v[1]),
			)
		}
		setFieldValue(t, b, `#editor-temperature`, "0.3")

		// Structured output on without a schema, with broken JSON, with a
		// schema of the wrong shape: each is said at the field, and Save
		// refuses to send.
		b.Do(t, chromedp.Click(chromedp.CSS(`#editor-structured`)))
		waitUntil(t, b, `document.getElementById("editor-schema-error").textContent.includes("needs a response schema")`)
		b.Do(t, chromedp.SendKeys(chromedp.CSS(`#editor-schema`), `{"type": "object", "properties": {"answer": `))
		waitUntil(t, b, `document.getElementById("editor-schema-error").textContent.includes("not valid JSON")`)
		setFieldValue(t, b, `#editor-schema`, `{"type": "object", "properties": {"answer": {"type": "text"}}}`)
		waitUntil(t, b, `document.getElementById("editor-schema-error").textContent.includes('"type" must be one of')`)
		assert.Equal(t, "true", browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#editor-schema`), "aria-invalid")).Value)
		b.Do(t, chromedp.Click(chromedp.CSS(`#save-version`)))
		waitUntil(t, b, `document.getElementById("editor-error").textContent.includes("Not saved")`)
		assert.Equal(t, "editor-schema", browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.id`)), "the field in error takes the focus")
		setFieldValue(t, b, `#editor-schema`, `{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}`)
		waitUntil(t, b, `document.getElementById("editor-schema-error").textContent === ""`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#editor-structured`)))
		writeScreenshot(t, b, promptScreenshots.Editor)

		b.Do(t,
			chromedp.Click(chromedp.CSS(`#save-version`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="version-title"]`)),
		)
		assert.Equal(t, "Greeting v2", pageText(t, b, `[data-testid="version-title"]`))
		loc := browserRun(t, b, chromedp.Location())
		v2 = loc[strings.LastIndex(loc, "/")+1:]
		require.NotEqual(t, v1, v2)

		got := e.Do(http.MethodGet, "/prompt-version/"+v2, e.Editor, nil)
		require.Equal(t, http.StatusOK, got.Status)
		var v struct {
			OriginVersionID string           `json:"originVersionId"`
			Variables       []map[string]any `json:"variables"`
			Messages        []map[string]any `json:"messages"`
			Configuration   map[string]any   `json:"configuration"`
		}
		got.JSON(t, &v)
		assert.Equal(t, v1, v.OriginVersionID)
		var roles, types []string
		for _, m := range v.Messages {
			roles = append(roles, m["role"].(string))
		}
		for _, x := range v.Variables {
			types = append(types, x["name"].(string)+":"+x["type"].(string))
		}
		assert.Equal(t, []string{"system", "user"}, roles)
		assert.Equal(t, []string{"name:text", "count:number", "formal:boolean", "meta:json", "notes:file"}, types)
		assert.Equal(t, 0.3, v.Configuration["temperature"])
		assert.Equal(t, map[string]any{"enabled": false, "schema": map[string]any{"type": "object",
			"properties": map[string]any{"answer": map[string]any{"type": "string"}}, "required": []any{"answer"}}},
			v.Configuration["structuredOutput"], "the schema is kept, switched off")
	})

	t.Run("Compare", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="version-canvas-link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#compare-button`)),
		)
		rows := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="versions-table"] tbody tr')].map(tr => tr.cells[0].textContent + "|" + tr.cells[1].textContent)`))
		assert.Equal(t, []string{"1|Greeting v1", "2|Greeting v2"}, rows)
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#compare-button`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff"]`)),
		)
		kinds := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="diff-message-0-table"] tbody tr')].map(tr => tr.dataset.kind + "|" + tr.cells[1].textContent + "|" + tr.cells[3].textContent)`))
		assert.Equal(t, []string{
			"same|You are a friendly greeter.|You are a friendly greeter.",
			"change|Greet {{name}} warmly.|Greet {{name}} warmly, in a few words.",
			"same|End with a smile.|End with a smile.",
		}, kinds, "the first message, line by line")
		assert.Contains(t, pageText(t, b, `[data-testid="diff-message-1"] h4`), "only on the right")
		added := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="diff-variables"] tbody tr')].map(tr => tr.dataset.variable + ":" + tr.dataset.kind)`))
		assert.Equal(t, []string{"name:same", "count:add", "formal:add", "meta:add", "notes:add"}, added)
		config := pageText(t, b, `[data-testid="diff-configuration"] tbody`)
		assert.Contains(t, config, `"temperature": 0.3`)
		writeScreenshot(t, b, promptScreenshots.Diff)
	})

	t.Run("Environments", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+canvasID),
			chromedp.WaitVisible(chromedp.CSS(`#open-environments`)),
			chromedp.Click(chromedp.CSS(`#open-environments`)),
			chromedp.WaitVisible(chromedp.CSS(`#new-env-name`)),
			chromedp.SendKeys(chromedp.CSS(`#new-env-name`), "Staging"),
		)
		waitUntil(t, b, `document.getElementById("new-env-error").textContent === "The name must be lowercase."`)
		setFieldValue(t, b, `#new-env-name`, "")
		b.Do(t, chromedp.SendKeys(chromedp.CSS(`#new-env-name`), "stag--"))
		waitUntil(t, b, `document.getElementById("new-env-error").textContent.includes("hyphen")`)
		setFieldValue(t, b, `#new-env-name`, "")
		b.Do(t, chromedp.SendKeys(chromedp.CSS(`#new-env-name`), "latest"))
		waitUntil(t, b, `document.getElementById("new-env-error").textContent === "The name latest is reserved."`)
		setFieldValue(t, b, `#new-env-name`, "")
		b.Do(t, chromedp.SendKeys(chromedp.CSS(`#new-env-name`), "staging"))
		waitUntil(t, b, `document.getElementById("new-env-error").textContent === ""`)
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#new-env-name`), kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-staging"]`)),
		)

		publishTo := func(env, version, want string) {
			t.Helper()
			b.Do(t,
				chromedp.SetValue(chromedp.CSS(`#env-`+env+`-version`), version),
				chromedp.Click(chromedp.CSS(`[data-testid="env-`+env+`-publish"]`)),
			)
			waitUntil(t, b, `(document.querySelector('[data-testid="env-`+env+`-active"]') || {}).textContent === `+jsQuote(want))
		}
		publishTo("staging", v1, "Greeting v1")
		publishTo("production", v1, "Greeting v1")
		publishTo("production", v2, "Greeting v2")
		assert.Equal(t, []string{"Greeting v2|active", "Greeting v1|"}, envHistoryRows(t, b, "history-production"))

		// Roll back: the earlier publication's version is published again.
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="history-production"] tbody tr:nth-child(2) button.rollback`)))
		waitUntil(t, b, `(document.querySelector('[data-testid="env-production-active"]') || {}).textContent === "Greeting v1"`)
		assert.Equal(t, []string{"Greeting v1|active", "Greeting v2|", "Greeting v1|"}, envHistoryRows(t, b, "history-production"))
		assert.Contains(t, pageText(t, b, `#environments-result`), "Rolled production back to Greeting v1")
		served := e.Do(http.MethodGet, "/environment/version?resourceType=prompt&resourceId="+canvasID+"&envName=production", e.Editor, nil)
		require.Equal(t, http.StatusOK, served.Status, "%s", served.Body)
		assert.Equal(t, v1, served.Map(t)["id"], "production serves the version rolled back to")
		assert.Equal(t, true, served.Map(t)["promoted"])
		writeScreenshot(t, b, promptScreenshots.Environments)

		// A custom environment is deleted after a second press.
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#new-env-name`), "scratch"+kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-scratch-delete"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="env-scratch-delete"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="env-scratch-delete-confirm"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="env-scratch"]`)),
		)
		assert.Contains(t, pageText(t, b, `#environments-result`), "Deleted the environment scratch")
		list := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+canvasID, e.Editor, nil)
		require.Equal(t, http.StatusOK, list.Status)
		var envs []map[string]any
		list.JSON(t, &envs)
		var names []string
		for _, x := range envs {
			names = append(names, x["name"].(string))
		}
		assert.ElementsMatch(t, []string{"production", "staging"}, names)

		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="environments"] a[href="#/canvases/`+canvasID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions-table"]`)),
		)
		states := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="versions-table"] tbody tr')].map(tr => tr.cells[2].textContent)`))
		assert.Equal(t, []string{"promoted", ""}, states, "the canvas page marks the promoted version")
		active := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="environments-table"] tbody tr')].map(tr => tr.cells[0].textContent + "|" + tr.cells[1].textContent)`))
		assert.ElementsMatch(t, []string{"production|Greeting v1", "staging|Greeting v1"}, active)
		writeScreenshot(t, b, promptScreenshots.Canvas)
	})

	t.Run("Playground", func(t *testing.T) {
		notes := filepath.Join(t.TempDir(), "notes.txt")
		require.NoError(t, os.WriteFile(notes, []byte("Bring cake."), 0o644))
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/versions/"+v2),
			chromedp.WaitVisible(chromedp.CSS(`#version-playground`)),
			chromedp.Click(chromedp.CSS(`#version-playground`)),
			chromedp.WaitVisible(chromedp.CSS(`#playground-run`)),
			chromedp.Click(chromedp.CSS(`#playground-run`)),
		)
		waitUntil(t, b, `document.querySelector('[data-testid="var-error-name"]').textContent === "name is required."`)
		assert.Empty(t, pageText(t, b, `#playground-output`), "nothing is sent without the required variable")

		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`[data-testid="var-input-name"]`), "Ada"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="var-input-count"]`), "3"),
			chromedp.Click(chromedp.CSS(`[data-testid="var-input-formal"]`)),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="var-input-meta"]`), `{"tier": "gold"}`),
			chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="var-input-notes"]`), []string{notes}),
			chromedp.Click(chromedp.CSS(`#playground-run`)),
		)
		// A part of the answer is on the page while the run goes on.
		waitUntil(t, b, `(() => { const o = document.getElementById("playground-output"); return o.dataset.state === "running" && o.textContent.length > 0; })()`)
		partial := pageText(t, b, `#playground-output`)
		waitUntil(t, b, `document.getElementById("playground-status").dataset.state === "done" && !document.getElementById("playground-stats").hidden`)
		answer := pageText(t, b, `#playground-output`)
		assert.Less(t, len(partial), len(answer), "the answer was shown as it arrived")
		assert.True(t, strings.HasPrefix(answer, "You are a friendly greeter.\nGreet Ada warmly, in a few words.\nEnd with a smile.\nCount 3, formal true, meta {\"tier\":\"gold\"}.\nNotes: "), answer)
		assert.Contains(t, answer, "name=notes.txt")
		assert.Contains(t, answer, "Bring cake.", "the uploaded file reached the model")

		assert.NotEqual(t, "—", pageText(t, b, `[data-testid="stat-input-tokens"]`))
		assert.NotEqual(t, "—", pageText(t, b, `[data-testid="stat-output-tokens"]`))
		assert.True(t, strings.HasSuffix(pageText(t, b, `[data-testid="stat-latency"]`), " ms"))
		assert.True(t, strings.HasSuffix(pageText(t, b, `[data-testid="stat-first"]`), " ms"))
		href := browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#playground-run-link`), "href")).Value
		require.True(t, strings.HasPrefix(href, "#/runs/completion/"), href)
		runID, err := url.PathUnescape(strings.TrimPrefix(href, "#/runs/completion/"))
		require.NoError(t, err)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+runID, e.Editor, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		assert.Equal(t, "completed", run.Map(t)["status"])
		assert.Equal(t, v2, run.Map(t)["versionId"])
		writeScreenshot(t, b, promptScreenshots.Playground)

		// The run link opens the run's detail page.
		b.Do(t, chromedp.Navigate(e.URL+"/console"+href))
		waitUntil(t, b, `document.body.innerText.includes(`+strconv.Quote(runID)+`)`)

		// The environment runs the version it serves.
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+canvasID+"/playground/environment/staging"),
		)
		waitUntil(t, b, `(document.getElementById("playground-target") || {}).value === "environment:staging"`)
		b.Do(t, chromedp.SendKeys(chromedp.CSS(`[data-testid="var-input-name"]`), "Grace"+kb.Enter))
		waitUntil(t, b, `document.getElementById("playground-status").dataset.state === "done"`)
		assert.Equal(t, "You are a friendly greeter.\nGreet Grace warmly.\nEnd with a smile.", pageText(t, b, `#playground-output`))

		// Stop ends a streamed answer where it is.
		setFieldValue(t, b, `#playground-message`, strings.Repeat("and more ", 200))
		b.Do(t, chromedp.Click(chromedp.CSS(`#playground-run`)))
		waitUntil(t, b, `(() => { const o = document.getElementById("playground-output"); return o.dataset.state === "running" && o.textContent.length > 0; })()`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#playground-stop`)))
		waitUntil(t, b, `document.getElementById("playground-status").dataset.state === "stopped"`)
		assert.NotContains(t, pageText(t, b, `#playground-output`), strings.Repeat("and more ", 200), "the answer stopped before its end")
		assert.True(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("playground-stop").disabled && !document.getElementById("playground-run").disabled`)),
			"Run is offered again")
	})

	t.Run("NameRulesMatchServer", func(t *testing.T) {
		names := []string{"staging", "qa-2", "a", "Staging", " staging ", "stag--ing", "-staging", "staging-", "stag_ing",
			"production", "promoted", "latest", "draft", "", "   ", strings.Repeat("a", 64), strings.Repeat("a", 65),
			"6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f", "\u00a0staging", "staging\t", "été"}
		got := browserRun(t, b, chromedp.Evaluate[[]bool](`import("/console/environments.js").then(m => `+
			jsQuote(strings.Join(names, "\x00"))+`.split("\u0000").map(n => m.customNameProblem(n) === ""))`, chromedp.EvalAwaitPromise))
		require.Len(t, got, len(names))
		for i, n := range names {
			_, err := env.CheckCustomName(n)
			assert.Equal(t, err == nil, got[i], "the console and the server agree on %q", n)
		}
	})

	t.Run("LineDiff", func(t *testing.T) {
		// diff returns the edit script from left to right as "op:line" items.
		diff := func(left, right []string) []string {
			t.Helper()
			args, err := json.Marshal([][]string{left, right})
			require.NoError(t, err)
			return browserRun(t, b, chromedp.Evaluate[[]string](`import("/console/diff.js").then(m => m.lineDiff(...`+string(args)+`)
				.map(s => s.op + ":" + (s.op === "add" ? s.b : s.a)))`, chromedp.EvalAwaitPromise))
		}
		assert.Equal(t, []string{"same:a", "del:b", "add:x", "same:c", "same:d", "add:e"},
			diff([]string{"a", "b", "c", "d"}, []string{"a", "x", "c", "d", "e"}))
		assert.Equal(t, []string{"add:a", "add:b"}, diff([]string{}, []string{"a", "b"}))
		assert.Equal(t, []string{"del:a"}, diff([]string{"a"}, []string{}))
		assert.Equal(t, []string{"del:x", "same:a", "same:b", "del:y", "add:z", "same:c"},
			diff([]string{"x", "a", "b", "y", "c"}, []string{"a", "b", "z", "c"}), "the longest common run is kept")
		assert.Equal(t, []string{"same:a", "same:a", "add:a"}, diff([]string{"a", "a"}, []string{"a", "a", "a"}))
	})

	assert.Empty(t, b.Errors(), "the page logs no errors")
}

// TestConsole_RootLeadsToConsole checks GET /: a browser is sent to the
// console, any other client gets NOT_FOUND as from any unknown path.
func TestConsole_RootLeadsToConsole(t *testing.T) {
	e := newTestEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(t *testing.T, accept string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.URL+"/", nil)
		require.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	t.Run("Browser", func(t *testing.T) {
		resp := get(t, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/console", resp.Header.Get("Location"))
		assert.Equal(t, "Accept", resp.Header.Get("Vary"))
	})
	for name, accept := range map[string]string{"NoAccept": "", "JSON": "application/json", "HTMLRefused": "text/html;q=0, application/json"} {
		t.Run(name, func(t *testing.T) {
			resp := get(t, accept)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode)
			assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"))
		})
	}
	t.Run("OpenAPIUnchanged", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/openapi.json", "", nil)
		assert.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, "/", e.Editor, nil).Status, "an API client asking for / gets NOT_FOUND")
	})
}
