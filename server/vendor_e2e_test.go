package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/vendors"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// vendorEnv is the reference server as canvasd builds it (an engine over
// SQLite, every vendor provider registered with vendors.Kinds, sealed
// credentials, the queue worker running), with one fake vendor per wire
// format. Every response body and every log line is kept, so that a test
// can check that no key is in them.
type vendorEnv struct {
	*testEnv
	Engine                                   *engine.Engine
	OpenAI, Anthropic, Gemini, BedrockVendor *fakeVendor

	log    *syncBuffer
	mu     sync.Mutex
	bodies [][]byte
}

// syncBuffer is a log output safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newVendorEnv starts the fakes, then the server and its worker. The fake
// Bedrock speaks HTTPS (a Bedrock API key is sent over https only): the
// providers' client trusts its certificate.
func newVendorEnv(t *testing.T) *vendorEnv {
	t.Helper()
	ve := &vendorEnv{log: &syncBuffer{},
		OpenAI: newFakeVendor(t, wireOpenAI, false), Anthropic: newFakeVendor(t, wireAnthropic, false),
		Gemini: newFakeVendor(t, wireGemini, false), BedrockVendor: newFakeVendor(t, wireBedrock, true)}
	trusting := ve.BedrockVendor.srv.Client()
	logger := slog.New(slog.NewTextHandler(ve.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ve.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(t.TempDir())
		require.NoError(t, err)
		secrets, err := credential.NewKeyRing(credential.NewKey())
		require.NoError(t, err)
		ve.Engine, err = engine.Open(context.Background(), engine.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL,
			Secrets: secrets, Logger: logger, Limits: engine.Limits{AllowPrivateNetworks: true, MaxFileSize: testMaxSize},
			ProviderKinds: vendors.Kinds(func(model.Credential) *http.Client { return trusting })})
		require.NoError(t, err)
		*o = server.Options{Engine: ve.Engine, Logger: logger,
			Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db})}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ve.Engine.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		require.NoError(t, ve.Engine.Close())
	})
	return ve
}

// Do is testEnv.Do keeping the response body.
func (ve *vendorEnv) Do(method, path, token string, body any, headers ...string) *testResponse {
	ve.t.Helper()
	r := ve.testEnv.Do(method, path, token, body, headers...)
	ve.mu.Lock()
	ve.bodies = append(ve.bodies, r.Body)
	ve.mu.Unlock()
	return r
}

// Create sends a POST that must answer 201 and returns the body.
func (ve *vendorEnv) Create(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	r := ve.Do(http.MethodPost, path, ve.Admin, body)
	require.Equal(t, http.StatusCreated, r.Status, "POST %s: %s", path, r.Body)
	return r.Map(t)
}

// Credential creates a credential and returns its id.
func (ve *vendorEnv) Credential(t *testing.T, body map[string]any) string {
	t.Helper()
	return ve.Create(t, "/credentials", body)["id"].(string)
}

// AssertNoKeys checks that no response body and no log line so far holds
// any of keys.
func (ve *vendorEnv) AssertNoKeys(t *testing.T, keys ...string) {
	t.Helper()
	ve.mu.Lock()
	all := bytes.Join(ve.bodies, []byte("\n"))
	ve.mu.Unlock()
	logs := ve.log.String()
	require.NotEmpty(t, logs, "the server logged its requests")
	for _, key := range keys {
		assert.False(t, bytes.Contains(all, []byte(key)), "a response holds the key %s", key)
		for _, line := range strings.Split(logs, "\n") {
			assert.NotContains(t, line, key, "a log line holds a key")
		}
	}
}

// Version creates a version of canvasID whose configuration is cfg, with
// a system and a user message, and returns its id.
func (ve *vendorEnv) Version(t *testing.T, canvasID string, cfg map[string]any) string {
	t.Helper()
	v := ve.Create(t, "/prompt-version", map[string]any{"promptId": canvasID, "configuration": cfg,
		"message": map[string]any{"role": "system", "content": "You are terse."}})
	id := v["id"].(string)
	ve.Create(t, "/prompt-version-message", map[string]any{"promptVersionId": id, "role": "user",
		"content": "Say hello to {{name}}."})
	return id
}

// Complete runs versionID synchronously with body's other fields.
func (ve *vendorEnv) Complete(canvasID, versionID string, fields map[string]any) *testResponse {
	return ve.Do(http.MethodPost, completionsPath, ve.Editor, merged(map[string]any{"canvas_id": canvasID,
		"version_id": versionID, "variables": map[string]any{"name": "Ada"}}, fields))
}

// Run reads a completion run, which must be recorded.
func (ve *vendorEnv) Run(t *testing.T, id string) map[string]any {
	t.Helper()
	return ve.read(t, completionsPath+"/"+id)
}

func (ve *vendorEnv) read(t *testing.T, path string) map[string]any {
	t.Helper()
	r := ve.Do(http.MethodGet, path, ve.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)
}

// WaitRun polls a completion run until it is terminal.
func (ve *vendorEnv) WaitRun(t *testing.T, id string) map[string]any {
	t.Helper()
	return ve.wait(t, completionsPath+"/"+id)
}

// WaitTask polls a task until it is terminal.
func (ve *vendorEnv) WaitTask(t *testing.T, id string) map[string]any {
	t.Helper()
	return ve.wait(t, "/v1/tasks/"+id)
}

func (ve *vendorEnv) wait(t *testing.T, path string) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		run = ve.read(t, path)
		return run["status"] == completion.StatusCompleted || run["status"] == completion.StatusFailed
	}, 10*time.Second, 10*time.Millisecond, "%s never finished", path)
	return run
}

// weatherFunction is the function the tool versions declare.
var weatherFunction = map[string]any{"name": "get_weather", "description": "The weather in a city.",
	"parameters": map[string]any{"type": "object", "required": []string{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string"}}}}

// answerSchema is the structured output schema of the structured versions.
var answerSchema = map[string]any{"type": "object", "required": []string{"answer"},
	"properties": map[string]any{"answer": map[string]any{"type": "string"}}}

// vendorCase is one provider run end to end.
type vendorCase struct {
	provider, model, key string
	settings             map[string]any
	// fake is the vendor the credential points at; base is the base URL
	// beside its root.
	fake *fakeVendor
	base string
	// header is where the vendor expects the key, and want its value.
	header, want string
	// inPerMillion and outPerMillion are the model's price.
	inPerMillion, outPerMillion float64
	// price, when set, is a workspace override of the model's price.
	price bool
	// wire says which greeting the fake answers with.
	wire string
}

// TestVendors_EndToEnd runs a canvas on every provider over HTTP against
// the vendor's fake: sync, streamed, with tools and with structured
// output; each run records the provider, the credential and the cost, the
// vendor receives the key where it expects it, and no answer and no log
// line ever holds a key.
func TestVendors_EndToEnd(t *testing.T) {
	ve := newVendorEnv(t)
	project := mustProjectID(t, ve.testEnv, "vendors")
	const bedrockKey = "ABSKQmVkcm9ja0FQSUtleS1lMmUtc2VjcmV0LTAwMDY="
	cases := []vendorCase{
		{provider: "openai", model: "gpt-4o", key: "sk-proj-E2Eopenai-secret-0001", fake: ve.OpenAI, base: "/v1",
			header: "Authorization", want: "Bearer sk-proj-E2Eopenai-secret-0001", inPerMillion: 2.5, outPerMillion: 10, wire: wireOpenAI},
		{provider: "azure-openai", model: "gpt-4o-mini", key: "azureE2Esecret0002key", fake: ve.OpenAI,
			settings: map[string]any{"apiVersion": "2024-10-21", "deployment": "gpt-4o-mini"},
			header:   "Api-Key", want: "azureE2Esecret0002key", inPerMillion: 0.15, outPerMillion: 0.6, wire: wireOpenAI},
		{provider: "openai-compatible", model: "llama3.1:8b", key: "sk-compat-E2E-secret-0003", fake: ve.OpenAI, base: "/v1",
			header: "Authorization", want: "Bearer sk-compat-E2E-secret-0003", inPerMillion: 0.1, outPerMillion: 0.2, price: true,
			wire: wireOpenAI},
		{provider: "anthropic", model: "claude-sonnet-4-5", key: "sk-ant-api03-E2Eanthropic-secret-0004", fake: ve.Anthropic,
			header: "X-Api-Key", want: "sk-ant-api03-E2Eanthropic-secret-0004", inPerMillion: 3, outPerMillion: 15, wire: wireAnthropic},
		{provider: "gemini", model: "gemini-2.5-flash", key: "AIzaSyE2Egemini-secret-0005", fake: ve.Gemini,
			header: "X-Goog-Api-Key", want: "AIzaSyE2Egemini-secret-0005", inPerMillion: 0.3, outPerMillion: 2.5, wire: wireGemini},
		{provider: "bedrock", model: "anthropic.claude-3-5-haiku-20241022-v1:0", key: bedrockKey, fake: ve.BedrockVendor,
			settings: map[string]any{"region": "us-east-1"}, header: "Authorization", want: "Bearer " + bedrockKey,
			inPerMillion: 0.8, outPerMillion: 4, wire: wireBedrock},
	}
	var keys []string
	for _, vc := range cases {
		keys = append(keys, vc.key)
		t.Run(vc.provider, func(t *testing.T) {
			body := map[string]any{"name": vc.provider + " key", "provider": vc.provider, "apiKey": vc.key,
				"baseUrl": vc.fake.URL() + vc.base}
			if vc.settings != nil {
				body["settings"] = vc.settings
			}
			cred := ve.Credential(t, body)
			if vc.price {
				r := ve.Do(http.MethodPut, "/models/"+vc.model, ve.Admin, map[string]any{"provider": vc.provider,
					"inputPerMillion": vc.inPerMillion, "outputPerMillion": vc.outPerMillion})
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			}
			cv := mustCanvas(t, ve.testEnv, project, vc.provider)["id"].(string)
			cfg := func(extra map[string]any) map[string]any {
				return merged(map[string]any{"model": vc.model, "credentialId": cred}, extra)
			}
			plain := ve.Version(t, cv, cfg(nil))
			tools := ve.Version(t, cv, cfg(map[string]any{"functions": []any{weatherFunction}, "toolChoice": "auto"}))
			structured := ve.Version(t, cv, cfg(map[string]any{"structuredOutput": map[string]any{"enabled": true, "schema": answerSchema}}))
			greeting := "Hello from " + vc.wire

			t.Run("Sync", func(t *testing.T) {
				r := ve.Complete(cv, plain, nil)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				got := r.Map(t)
				assert.Equal(t, greeting, completionText(t, got))
				vc.assertRun(t, ve.Run(t, got["id"].(string)), cred)
				vc.assertRequest(t)
			})
			t.Run("Stream", func(t *testing.T) {
				r := ve.Complete(cv, plain, map[string]any{"stream": true})
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				id, text, _ := streamed(t, r.Body)
				assert.Equal(t, greeting, text)
				vc.assertRun(t, ve.Run(t, id), cred)
				vc.assertRequest(t)
			})
			t.Run("Tools", func(t *testing.T) {
				r := ve.Complete(cv, tools, map[string]any{"messages": []any{map[string]any{"content": "Weather in Paris?"}}})
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				choice := r.Map(t)["choices"].([]any)[0].(map[string]any)
				assert.Equal(t, model.FinishToolCalls, choice["finishReason"])
				assertWeatherCall(t, choice["message"].(map[string]any)["toolCalls"])
				vc.assertRun(t, ve.Run(t, r.Map(t)["id"].(string)), cred)

				r = ve.Complete(cv, tools, map[string]any{"stream": true})
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				id, _, calls := streamed(t, r.Body)
				assertWeatherCall(t, calls)
				vc.assertRun(t, ve.Run(t, id), cred)
			})
			t.Run("StructuredOutput", func(t *testing.T) {
				for _, stream := range []bool{false, true} {
					r := ve.Complete(cv, structured, map[string]any{"stream": stream})
					require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
					id := ""
					if stream {
						id, _, _ = streamed(t, r.Body)
					} else {
						id = r.Map(t)["id"].(string)
					}
					run := ve.Run(t, id)
					vc.assertRun(t, run, cred)
					assert.JSONEq(t, fakeStructured, completionText(t, run["result"].(map[string]any)), "stream %v", stream)
				}
			})
			t.Run("VendorQuotesTheKey", func(t *testing.T) {
				refusing := newFakeVendor(t, vc.wire, vc.fake.srv.TLS != nil)
				refusing.refuse = true
				body["name"], body["baseUrl"] = vc.provider+" revoked", refusing.URL()+vc.base
				revoked := ve.Credential(t, body)
				v := ve.Version(t, cv, map[string]any{"model": vc.model, "credentialId": revoked})
				for _, stream := range []bool{false, true} {
					r := ve.Complete(cv, v, map[string]any{"stream": stream})
					require.Equal(t, http.StatusBadGateway, r.Status, "%s", r.Body)
					assert.Equal(t, canvas.EPROVIDER, readError(t, r).Code)
				}
				r := ve.Complete(cv, v, map[string]any{"async": true})
				require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
				run := ve.WaitRun(t, r.Map(t)["id"].(string))
				assert.Equal(t, canvas.EPROVIDER, run["error"].(map[string]any)["code"])
				require.Len(t, refusing.Requests(), 3, "the vendor was called once per run: a refused key is not tried again")
				assert.Equal(t, vc.want, refusing.Last(t).Header.Get(vc.header))
			})
		})
	}
	ve.AssertNoKeys(t, keys...)
}

// assertRun checks a completed run of the case: who answered, and its
// cost at the model's price.
func (vc vendorCase) assertRun(t *testing.T, run map[string]any, cred string) {
	t.Helper()
	require.Equal(t, completion.StatusCompleted, run["status"], "%v", run["error"])
	assert.Equal(t, vc.provider, run["provider"])
	assert.Equal(t, cred, run["credentialId"])
	usage := run["usage"].(map[string]any)
	in, out := usage["inputTokens"].(float64), usage["outputTokens"].(float64)
	assert.Positive(t, in)
	assert.Positive(t, out)
	cost, ok := run["cost"].(map[string]any)
	require.True(t, ok, "the run of a priced model has a cost: %v", run["cost"])
	assert.InDelta(t, in*vc.inPerMillion/1e6, cost["input"], 1e-9)
	assert.InDelta(t, out*vc.outPerMillion/1e6, cost["output"], 1e-9)
	assert.InDelta(t, cost["input"].(float64)+cost["output"].(float64), cost["total"], 1e-9)
	assert.Equal(t, "USD", cost["currency"])
	assert.Equal(t, cost, run["result"].(map[string]any)["cost"], "the answer carries the run's cost")
}

// assertRequest checks the last request the vendor received: the key in
// the vendor's header, and the model where the vendor reads it.
func (vc vendorCase) assertRequest(t *testing.T) {
	t.Helper()
	req := vc.fake.Last(t)
	assert.Equal(t, vc.want, req.Header.Get(vc.header), "the key goes in %s", vc.header)
	switch vc.provider {
	case "azure-openai":
		assert.Equal(t, "/openai/deployments/gpt-4o-mini/chat/completions", req.Path)
		assert.Equal(t, "2024-10-21", req.Query.Get("api-version"))
		assert.Empty(t, req.Header.Get("Authorization"))
	case "openai", "openai-compatible", "anthropic":
		assert.Equal(t, vc.model, req.Body["model"])
	default:
		assert.Contains(t, req.Path, vc.model)
	}
}

// streamed reads a completion stream: the run id, the text, and the tool
// calls of the chunk that ends it; the stream must end with [DONE].
func streamed(t *testing.T, body []byte) (id, text string, calls any) {
	t.Helper()
	events := sseEvents(t, body)
	require.NotEmpty(t, events)
	require.Equal(t, "[DONE]", events[len(events)-1].Data, "the stream ends: %s", body)
	var b strings.Builder
	for _, ev := range events[:len(events)-1] {
		require.Empty(t, ev.Type, "no error event: %s", ev.Data)
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &c), ev.Data)
		id = c["id"].(string)
		for _, ch := range c["choices"].([]any) {
			choice := ch.(map[string]any)
			if delta, ok := choice["delta"].(map[string]any); ok {
				if content, ok := delta["content"].(map[string]any); ok {
					b.WriteString(content["text"].(string))
				}
			}
			if tc, ok := choice["toolCalls"]; ok {
				calls = tc
			}
		}
	}
	return id, b.String(), calls
}

// assertWeatherCall checks that calls is the one call of get_weather for
// Paris.
func assertWeatherCall(t *testing.T, calls any) {
	t.Helper()
	list, ok := calls.([]any)
	require.True(t, ok, "tool calls: %v", calls)
	require.Len(t, list, 1)
	call := list[0].(map[string]any)
	assert.Equal(t, "get_weather", call["name"])
	assert.Equal(t, map[string]any{"city": "Paris"}, call["arguments"])
	assert.NotEmpty(t, call["id"])
}
