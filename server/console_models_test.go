package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// The screenshots TestConsole_CredentialsModelsTools writes when
// CANVAS_UPDATE_SCREENSHOT=1, relative to the server package.
const (
	credentialsScreenshot = "../docs/console-credentials.png"
	modelsScreenshot      = "../docs/console-models.png"
	toolsScreenshot       = "../docs/console-playground-tools.png"
)

// newCredentialsEnv starts a server over an engine as canvasd builds it,
// on a real SQLite database, with a key ring sealing credentials and the
// echo model streaming with a pause between pieces; credentials may name
// local servers.
func newCredentialsEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		secrets, err := credential.NewKeyRing(credential.NewKey())
		require.NoError(t, err)
		e, err := engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL, Secrets: secrets,
			Limits:        engine.Limits{AllowPrivateNetworks: true},
			ProviderKinds: model.Kinds{canvas.ProviderOpenAICompatible: openai.Factory},
			Providers:     model.NewRegistry(model.NewEcho(model.EchoOptions{Delay: 20 * time.Millisecond}))})
		require.NoError(t, err)
		*o = server.Options{Engine: e, Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db})}
	})
}

// keyOnPage reports whether key appears anywhere on the page: its markup
// or the value of any field.
func keyOnPage(t *testing.T, b *browserTab, key string) bool {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[bool](`document.documentElement.outerHTML.includes(`+jsQuote(key)+`) ||
		[...document.querySelectorAll("input, textarea")].some(i => i.value.includes(`+jsQuote(key)+`))`))
}

// optionValues returns the values of a select's options.
func optionValues(t *testing.T, b *browserTab, sel string) []string {
	t.Helper()
	return browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+jsQuote(sel+" option")+`)].map(o => o.value)`))
}

// TestConsole_CredentialsModelsTools drives the model side of the console in
// a real browser, as an admin: the Credentials page (the server's refusals
// shown at their fields, a credential created and listed with its hint and
// never its key, rotated, edited, deleted), the Models page (a price set,
// refused at its field, removed), the version editor's provider, credential
// and model picker and its functions (refused by the API at the field),
// and the playground on the echo model: a run with a picked model, a
// streamed tool call answered and continued, and the cost of the runs on
// the run's page, the run list and the canvas's versions.
func TestConsole_CredentialsModelsTools(t *testing.T) {
	execPath := findChromium(t)
	e := newCredentialsEnv(t)
	projectID := mustProjectID(t, e, "Support team")
	canvasID := mustCreate(t, e, "/prompt", e.Admin, map[string]any{"title": "Weather", "projectId": projectID})["id"].(string)
	versionID := mustCreate(t, e, "/prompt-version", e.Admin, map[string]any{
		"promptId": canvasID, "title": "Weather bot",
		"configuration": map[string]any{"model": "gpt-4o-mini", "functions": []any{map[string]any{
			"name": "get_weather", "description": "The weather in a city.", "parameters": map[string]any{
				"type": "object", "required": []string{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
		"message": map[string]any{"role": "system", "content": "You answer about the weather."},
	})["id"].(string)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Admin+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav-credentials`)),
	)

	const key = "sk-ant-console-DISTINCTsecret-9f2c"
	const rotated = "sk-ant-rotated-OTHERsecret-77aa"
	var credID string
	t.Run("CredentialRefusedAtFields", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-credentials`)),
			chromedp.WaitVisible(chromedp.CSS(`#credential-form`)),
		)
		assert.Equal(t, "No credentials yet: runs use the server's own back end, or the offline echo model.",
			pageText(t, b, `[data-testid="credentials-table-empty"]`))
		setSelect(t, b, "credential-provider", "azure-openai")
		b.Do(t,
			chromedp.WaitVisible(chromedp.CSS(`#credential-setting-apiVersion`)),
			chromedp.SendKeys(chromedp.CSS(`#credential-name`), "Azure"),
			chromedp.SendKeys(chromedp.CSS(`#credential-key`), "azure-key-1234"),
			chromedp.Click(chromedp.CSS(`#credential-save`)),
		)
		waitUntil(t, b, `document.querySelector('[data-testid="credential-result"] [data-testid="error"]') !== null`)
		assert.Contains(t, pageText(t, b, `#credential-base-url-error`), "is required")
		assert.NotEmpty(t, pageText(t, b, `#credential-setting-apiVersion-error`), "the missing api-version is said at its field")
		invalid := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#credential-form [aria-invalid='true']")].map(e => e.id)`))
		assert.ElementsMatch(t, []string{"credential-base-url", "credential-setting-apiVersion"}, invalid)
		focused := browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.id`))
		assert.Contains(t, invalid, focused, "the first field in error takes the focus")
		assert.NotContains(t, pageText(t, b, `[data-testid="credential-result"]`), "azure-key-1234", "an error never repeats the key")
	})

	t.Run("CreateListsHintNeverKey", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/api-keys"),
			chromedp.WaitVisible(chromedp.CSS(`#key-form`)),
			chromedp.Navigate(e.URL+"/console#/credentials"),
			chromedp.WaitVisible(chromedp.CSS(`#credential-form`)),
		)
		setSelect(t, b, "credential-provider", "anthropic")
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#credential-name`), "Claude"),
			chromedp.SendKeys(chromedp.CSS(`#credential-key`), key),
			chromedp.Click(chromedp.CSS(`#credential-save`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="credentials-notice"]`)),
		)
		assert.Equal(t, "Credential Claude created; its key ends …9f2c.", pageText(t, b, `[data-testid="credentials-notice"]`))
		r := e.Do(http.MethodGet, "/credentials", e.Admin, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		data := r.Map(t)["data"].([]any)
		require.Len(t, data, 1)
		credID = data[0].(map[string]any)["id"].(string)
		assert.Equal(t, "Claude", pageText(t, b, `[data-testid="credential-name-`+credID+`"]`))
		assert.Equal(t, "…9f2c", pageText(t, b, `[data-testid="credential-hint-`+credID+`"]`))
		assert.Equal(t, "never", pageText(t, b, `[data-testid="credential-used-`+credID+`"]`))
		assert.False(t, keyOnPage(t, b, key), "the page never holds the key once saved")
		assert.Equal(t, "password", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("credential-key").type`)))
		screenshot(t, b, credentialsScreenshot)
	})

	t.Run("RotateEditDelete", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="credential-rotate-`+credID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#credential-rotate-key`)),
			chromedp.SendKeys(chromedp.CSS(`#credential-rotate-key`), rotated+kb.Enter),
		)
		waitUntil(t, b, `(document.querySelector('[data-testid="credential-hint-`+credID+`"]') || {}).textContent === "…77aa"`)
		assert.Contains(t, pageText(t, b, `[data-testid="credentials-notice"]`), "rotated")
		assert.False(t, keyOnPage(t, b, rotated))

		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="credential-edit-`+credID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#credential-edit-name`)),
		)
		assert.Equal(t, "", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("credential-edit-key").value`)),
			"the edit form does not hold the key")
		setFieldValue(t, b, `#credential-edit-name`, "Claude team")
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="credential-edit-project-`+projectID+`"]`)),
			chromedp.Click(chromedp.CSS(`#credential-edit-save`)),
		)
		waitUntil(t, b, `(document.querySelector('[data-testid="credential-name-`+credID+`"]') || {}).textContent === "Claude team"`)
		row := browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="credential-name-`+credID+`"]').closest("tr").textContent`))
		assert.Contains(t, row, "Support team", "the credential is limited to the project")
		r := e.Do(http.MethodGet, "/credentials/"+credID, e.Admin, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, []any{projectID}, r.Map(t)["projectIds"])
		assert.Equal(t, "…77aa", r.Map(t)["keyHint"])

		// A second credential, deleted after a second press.
		setSelect(t, b, "credential-provider", "bedrock")
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#credential-name`), "Spare"),
			chromedp.SendKeys(chromedp.CSS(`#credential-key`), "AKIA-spare-key-0000"),
			chromedp.SendKeys(chromedp.CSS(`#credential-setting-region`), "eu-west-1"),
			chromedp.Click(chromedp.CSS(`#credential-save`)),
		)
		waitUntil(t, b, `document.querySelectorAll('[data-testid="credentials-table"] tbody tr').length === 2`)
		spare := browserRun(t, b, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid^="credential-name-"]')]
			.find(e => e.textContent === "Spare").dataset.testid.slice("credential-name-".length)`))
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="credential-delete-`+spare+`"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="credential-confirm-delete-`+spare+`"]`)),
		)
		waitUntil(t, b, `document.querySelectorAll('[data-testid="credentials-table"] tbody tr').length === 1`)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, "/credentials/"+spare, e.Admin, nil).Status)
	})

	t.Run("ModelPrices", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-models`)),
			chromedp.WaitVisible(chromedp.CSS(`#price-form`)),
		)
		assert.Equal(t, "$0", pageText(t, b, `[data-testid="model-input-echo"]`))
		assert.NotEmpty(t, pageText(t, b, `[data-testid="model-claude-sonnet-4-5"]`), "the catalogue lists current models")
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="model-edit-echo"]`)))
		assert.Equal(t, "echo", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("price-name").value`)))
		setFieldValue(t, b, `#price-input`, "-1")
		setFieldValue(t, b, `#price-output`, "2000")
		b.Do(t, chromedp.Click(chromedp.CSS(`#price-save`)))
		waitUntil(t, b, `document.getElementById("price-input-error").textContent !== ""`)
		assert.Equal(t, "true", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("price-input").getAttribute("aria-invalid")`)))
		assert.Empty(t, pageText(t, b, `#price-output-error`))

		setFieldValue(t, b, `#price-input`, "1000")
		b.Do(t, chromedp.Click(chromedp.CSS(`#price-save`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="models-notice"]`)))
		assert.Equal(t, "$1000", pageText(t, b, `[data-testid="model-input-echo"]`))
		assert.Equal(t, "$2000", pageText(t, b, `[data-testid="model-output-echo"]`))
		setSelect(t, b, "models-provider", "echo")
		screenshot(t, b, modelsScreenshot)

		// An override of another model, removed again.
		setFieldValue(t, b, `#price-name`, "my-local-llama")
		setSelect(t, b, "price-provider", "openai-compatible")
		setFieldValue(t, b, `#price-input`, "0.1")
		setFieldValue(t, b, `#price-output`, "0.2")
		b.Do(t, chromedp.Click(chromedp.CSS(`#price-save`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="model-reset-my-local-llama"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="model-reset-my-local-llama"]`)))
		waitUntil(t, b, `document.querySelector('[data-testid="model-my-local-llama"]') === null && document.querySelector('[data-testid="models-notice"]') !== null`)
	})

	t.Run("EditorPicksProviderCredentialAndTools", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/versions/"+versionID+"/new"),
			chromedp.WaitVisible(chromedp.CSS(`#editor-functions`)),
		)
		assert.Contains(t, browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("editor-functions").value`)), `"get_weather"`)
		assert.Equal(t, []string{"", credID}, optionValues(t, b, `#editor-credential`), "every credential the canvas may use")
		setSelect(t, b, "editor-provider", "openai")
		assert.Equal(t, []string{""}, optionValues(t, b, `#editor-credential`), "no openai credential")
		assert.Contains(t, pageText(t, b, `#editor-credential-hint`), "no openai credential")
		setSelect(t, b, "editor-provider", "anthropic")
		assert.Equal(t, []string{"", credID}, optionValues(t, b, `#editor-credential`))
		suggested := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#editor-models option")].map(o => o.value)`))
		assert.Contains(t, suggested, "claude-sonnet-4-5")
		assert.NotContains(t, suggested, "gpt-4o-mini", "the models of the provider only")
		setSelect(t, b, "editor-credential", credID)
		setFieldValue(t, b, `#editor-model`, "claude-sonnet-4-5")
		setSelect(t, b, "editor-tool-choice", "function:get_weather")

		// The API compiles each function's parameters: a schema it refuses
		// is shown at the functions field.
		setFieldValue(t, b, `#editor-functions`, `[{"name": "get_weather", "parameters": {"type": "objekt"}}]`)
		assert.Empty(t, pageText(t, b, `#editor-functions-error`), "the page's own check passes")
		b.Do(t, chromedp.Click(chromedp.CSS(`#save-version`)))
		waitUntil(t, b, `document.getElementById("editor-functions-error").textContent !== ""`)
		assert.Contains(t, pageText(t, b, `#editor-functions-error`), "/0/parameters")
		assert.Equal(t, "editor-functions", browserRun(t, b, chromedp.Evaluate[string](`document.activeElement.id`)))

		setFieldValue(t, b, `#editor-functions`, `[{"name": 1}]`)
		assert.Contains(t, pageText(t, b, `#editor-functions-error`), `"name" must be`)
		setFieldValue(t, b, `#editor-functions`, `[{"name": "get_weather", "description": "The weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`)
		setSelect(t, b, "editor-tool-choice", "function:get_weather")
		b.Do(t, chromedp.Click(chromedp.CSS(`#save-version`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="config-provider"]`)))
		assert.Equal(t, "anthropic", pageText(t, b, `[data-testid="config-provider"]`))
		assert.Equal(t, "Claude team", pageText(t, b, `[data-testid="config-credential"]`))
		assert.Equal(t, "claude-sonnet-4-5", pageText(t, b, `[data-testid="config-model"]`))
		assert.Equal(t, "call get_weather", pageText(t, b, `[data-testid="config-tool-choice"]`))
		assert.Contains(t, pageText(t, b, `[data-testid="config-functions"]`), "get_weather")
		assert.Equal(t, "—", pageText(t, b, `[data-testid="version-cost"]`), "no runs yet")
	})

	var firstRun, toolRun string
	t.Run("PlaygroundRunsPickedModelOnEcho", func(t *testing.T) {
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+canvasID+"/playground/version/"+versionID),
			chromedp.WaitVisible(chromedp.CSS(`#playground-model`)),
		)
		assert.Equal(t, "gpt-4o-mini", browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("playground-model").value`)),
			"the picker starts on the version's model")
		setSelect(t, b, "playground-provider", "anthropic")
		assert.Equal(t, []string{"", credID}, optionValues(t, b, `#playground-credential`))
		setSelect(t, b, "playground-provider", "")
		setFieldValue(t, b, `#playground-model`, "echo")
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#playground-message`), "Hello there"),
			chromedp.Click(chromedp.CSS(`#playground-run`)),
			chromedp.WaitVisible(chromedp.CSS(`#playground-run-link`)),
		)
		assert.Equal(t, "You answer about the weather.\nHello there", pageText(t, b, `#playground-output`))
		assert.Equal(t, "echo", pageText(t, b, `[data-testid="stat-model"]`))
		firstRun = pageText(t, b, `#playground-run-link`)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+firstRun, e.Admin, nil).Map(t)
		assert.Equal(t, "echo", run["model"], "the run used the model picked (settings.model)")
		cost := run["cost"].(map[string]any)
		assert.Greater(t, cost["total"].(float64), 0.0, "echo's workspace price gives the run a cost")
		assert.Equal(t, money(cost["total"].(float64)), pageText(t, b, `[data-testid="stat-cost"]`))
	})

	t.Run("PlaygroundToolCall", func(t *testing.T) {
		setFieldValue(t, b, `#playground-message`, `Please call get_weather {"city": "Paris"}`)
		b.Do(t, chromedp.Click(chromedp.CSS(`#playground-run`)))
		waitUntil(t, b, `document.getElementById("playground-tool-form") !== null`)
		assert.Equal(t, `get_weather({"city":"Paris"})`, pageText(t, b, `#playground-tool-stream`), "the streamed pieces of the call")
		cells := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="playground-tool-table"] tbody td')].map(td => td.textContent)`))
		require.Len(t, cells, 3)
		assert.Equal(t, model.EchoCallID, cells[0])
		assert.Equal(t, "get_weather", cells[1])
		assert.JSONEq(t, `{"city": "Paris"}`, cells[2])
		assert.Equal(t, "The model called get_weather.", pageText(t, b, `#playground-status`))
		screenshot(t, b, toolsScreenshot)

		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`[data-testid="tool-result-get_weather"]`), "sunny, 21 °C"),
			chromedp.Click(chromedp.CSS(`#playground-continue`)),
		)
		waitUntil(t, b, `document.getElementById("playground-status").textContent === "Done." && !document.getElementById("playground-stats").hidden`)
		assert.Equal(t, "get_weather returned: sunny, 21 °C", pageText(t, b, `#playground-output`))
		roles := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="playground-messages"] li')].map(li => li.dataset.role)`))
		assert.Equal(t, []string{"user", "assistant", "tool"}, roles, "the conversation the continued run sent")
		toolRun = pageText(t, b, `#playground-run-link`)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+toolRun, e.Admin, nil).Map(t)
		msgs := run["request"].(map[string]any)["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		assert.Equal(t, "tool", last["role"])
		assert.Equal(t, model.EchoCallID, last["toolCallId"])
	})

	t.Run("CostOnRunsAndVersions", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#playground-run-link`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="crun-cost"]`)),
		)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+toolRun, e.Admin, nil).Map(t)
		assert.True(t, strings.HasPrefix(pageText(t, b, `[data-testid="crun-cost"]`), money(run["cost"].(map[string]any)["total"].(float64))))
		assert.Contains(t, pageText(t, b, `[data-testid="crun-messages"]`), "get_weather")

		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-runs`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-cost-`+toolRun+`"]`)),
		)
		assert.Equal(t, money(run["cost"].(map[string]any)["total"].(float64)), pageText(t, b, `[data-testid="run-cost-`+toolRun+`"]`))
		waitUntil(t, b, `document.getElementById("runs-totals").textContent !== ""`)
		assert.Contains(t, pageText(t, b, `#runs-totals`), "3 runs")

		// A run of a model without a price, on a local OpenAI-compatible
		// server, has no cost: a dash; its credential was last used now.
		models := make(chan string, 1)
		r := e.Do(http.MethodPost, "/credentials", e.Admin, map[string]any{"name": "Local", "provider": "openai-compatible",
			"baseUrl": openAIFake(t, models)})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		local := r.Map(t)["id"].(string)
		r = e.Do(http.MethodPost, "/v2/chat/completions", e.Admin, map[string]any{"canvas_id": canvasID, "version_id": versionID,
			"settings": map[string]any{"model": "local-llama", "credentialId": local}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "local-llama", <-models)
		unpriced := r.Map(t)["id"].(string)
		b.Do(t, chromedp.Click(chromedp.CSS(`#runs-apply`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-cost-`+unpriced+`"]`)))
		assert.Equal(t, "—", pageText(t, b, `[data-testid="run-cost-`+unpriced+`"]`))
		waitUntil(t, b, `document.getElementById("runs-totals").textContent.includes("1 without a price")`)
		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="run-row-link-`+unpriced+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="crun-cost"]`)))
		assert.Equal(t, "—", pageText(t, b, `[data-testid="crun-cost"]`))
		assert.Equal(t, "openai-compatible", pageText(t, b, `[data-testid="crun-provider"]`))
		b.Do(t, chromedp.Click(chromedp.CSS(`#nav-credentials`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="credential-used-`+local+`"]`)))
		assert.NotEqual(t, "never", pageText(t, b, `[data-testid="credential-used-`+local+`"]`))
		assert.Equal(t, "no key", pageText(t, b, `[data-testid="credential-hint-`+local+`"]`))

		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/canvases/"+canvasID),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="version-cost-`+versionID+`"]`)),
		)
		totals := e.Do(http.MethodGet, "/v2/chat/completions?totals=true&canvasId="+canvasID, e.Admin, nil).Map(t)["totals"].(map[string]any)
		group := totals["groups"].([]any)[0].(map[string]any)
		require.Equal(t, versionID, group["versionId"])
		assert.Equal(t, money(group["cost"].(map[string]any)["total"].(float64)), pageText(t, b, `[data-testid="version-cost-`+versionID+`"]`))
	})

	// The browser logs each refused request; those the test provoked are
	// the only errors.
	var unexpected []string
	for _, msg := range b.Errors() {
		refused := strings.Contains(msg, "status of 422 (Unprocessable Entity)")
		if !refused || !(strings.HasSuffix(msg, "/credentials") || strings.HasSuffix(msg, "/models/echo") || strings.HasSuffix(msg, "/prompt-version")) {
			unexpected = append(unexpected, msg)
		}
	}
	assert.Empty(t, unexpected, "the page logged no other errors")
}

// money formats a cost in dollars as the console does: at least two and
// at most six decimals.
func money(total float64) string {
	s := strings.TrimRight(strconv.FormatFloat(total, 'f', 6, 64), "0")
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	return "$" + whole + "." + frac
}
