package gemini_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/gemini"
)

const testKey = "AIza-test-key"

// mustGemini returns a Gemini API provider talking to baseURL with the
// test key.
func mustGemini(t *testing.T, baseURL string) *gemini.Provider {
	t.Helper()
	p, err := gemini.New(gemini.Options{Credential: model.Credential{
		Name: "team", Provider: canvas.ProviderGemini, APIKey: testKey, BaseURL: baseURL,
		Settings: model.Settings{Headers: map[string]string{"X-Team": "canvas"}},
	}})
	require.NoError(t, err)
	return p
}

func ptr[T any](v T) *T { return &v }

// chatRequest is a rendered two-message request with every setting.
func chatRequest() model.Request {
	return model.Request{
		Model: "gemini-test",
		Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "You are terse."},
			{Role: canvas.RoleUser, Content: "Say hi."},
		},
		Temperature: ptr(0.25),
		MaxTokens:   ptr(64),
		TopP:        ptr(0.5),
	}
}

func TestProvider_Complete(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Hi"}`, `{"text": " there"}`}})
		p := mustGemini(t, url)

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, &model.Result{
			Text: "Hi there", Usage: model.Usage{InputTokens: 11, OutputTokens: 4},
			Model: "gemini-test-001", FinishReason: "stop",
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "/v1beta/models/gemini-test:generateContent", reqs[0].Path)
		assert.Equal(t, testKey, reqs[0].Header.Get("X-Goog-Api-Key"))
		assert.Empty(t, reqs[0].Header.Get("Authorization"))
		assert.Equal(t, "canvas", reqs[0].Header.Get("X-Team"))
		assertJSON(t, `{
			"contents": [{"role": "user", "parts": [{"text": "Say hi."}]}],
			"systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
			"generationConfig": {"temperature": 0.25, "topP": 0.5, "maxOutputTokens": 64}
		}`, reqs[0].Body)
	})
	t.Run("DefaultsLeftOut", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		p := mustGemini(t, url)

		_, err := p.Complete(context.Background(), model.Request{Model: "gemini-test", Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "a"}, {Role: canvas.RoleAssistant, Content: "b"},
			{Role: canvas.RoleFunction, Content: "c"}, {Role: canvas.RoleUser, Content: "d"},
		}})
		require.NoError(t, err)
		require.Len(t, fake.Requests(), 1)
		assertJSON(t, `{"contents": [
			{"role": "user", "parts": [{"text": "a"}]},
			{"role": "model", "parts": [{"text": "b"}]},
			{"role": "user", "parts": [{"text": "c"}, {"text": "d"}]}
		], "generationConfig": {}}`, fake.Requests()[0].Body)
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "{\"answer\": \"hi\"}"}`}})
		p := mustGemini(t, url)

		schema := `{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}`
		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(schema)}
		res, err := p.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.NoError(t, model.ValidateOutput(req.StructuredOutput.Schema, res.Text))

		require.Len(t, fake.Requests(), 1)
		assertJSON(t, `{"temperature": 0.25, "topP": 0.5, "maxOutputTokens": 64,
			"responseMimeType": "application/json", "responseJsonSchema": `+schema+`}`,
			fake.Requests()[0].Body["generationConfig"])
	})
	t.Run("InvalidSchema", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		p := mustGemini(t, url)

		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(`{"type": 5}`)}
		_, err := p.Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
	t.Run("NoModel", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		p := mustGemini(t, url)

		req := chatRequest()
		req.Model = ""
		_, err := p.Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
	t.Run("FinishReasons", func(t *testing.T) {
		for finish, want := range map[string]string{
			"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
			"PROHIBITED_CONTENT": "content_filter", "MALFORMED_FUNCTION_CALL": "malformed_function_call",
		} {
			_, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "x"}`}, Finish: finish})
			res, err := mustGemini(t, url).Complete(context.Background(), chatRequest())
			require.NoError(t, err)
			assert.Equal(t, want, res.FinishReason, finish)
		}
	})
	t.Run("Thoughts", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "pondering", "thought": true}`, `{"text": "42"}`}})
		res, err := mustGemini(t, url).Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "42", res.Text)
	})
}

func TestProvider_Stream(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Hel"}`, `{"text": "lo"}`, `{"text": ", world"}`}})
		p := mustGemini(t, url)

		var got []string
		res, err := p.Stream(context.Background(), chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"Hel", "lo", ", world"}, got)
		assert.Equal(t, &model.Result{
			Text: "Hello, world", Usage: model.Usage{InputTokens: 11, OutputTokens: 5},
			Model: "gemini-test-001", FinishReason: "stop",
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "/v1beta/models/gemini-test:streamGenerateContent", reqs[0].Path)
		assert.Equal(t, "sse", reqs[0].Query.Get("alt"))
		assert.Equal(t, testKey, reqs[0].Header.Get("X-Goog-Api-Key"))
		assert.Equal(t, "canvas", reqs[0].Header.Get("X-Team"))
		assertJSON(t, `{
			"contents": [{"role": "user", "parts": [{"text": "Say hi."}]}],
			"systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
			"generationConfig": {"temperature": 0.25, "topP": 0.5, "maxOutputTokens": 64}
		}`, reqs[0].Body)
	})
	t.Run("SameAsComplete", func(t *testing.T) {
		parts := []string{`{"text": "Let me check."}`, `{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}`}
		_, url := newFake(t, &fakeGemini{Parts: parts})
		p := mustGemini(t, url)

		streamed, err := p.Stream(context.Background(), toolRequest(), nil)
		require.NoError(t, err)
		whole, err := p.Complete(context.Background(), toolRequest())
		require.NoError(t, err)
		assert.Equal(t, whole, streamed)
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "{\"n\":"}`, `{"text": " 1}"}`}})
		p := mustGemini(t, url)

		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(`{"type": "object"}`)}
		res, err := p.Stream(context.Background(), req, nil)
		require.NoError(t, err)
		assert.Equal(t, `{"n": 1}`, res.Text)
		gc := fake.Requests()[0].Body["generationConfig"].(map[string]any)
		assert.Equal(t, "application/json", gc["responseMimeType"])
		assertJSON(t, `{"type": "object"}`, gc["responseJsonSchema"])
	})
	t.Run("ErrorEvent", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{StreamError: true, Parts: []string{`{"text": "partial"}`, `{"text": "never"}`}})
		p := mustGemini(t, url)

		var got []string
		_, err := p.Stream(context.Background(), chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "gemini" answered HTTP 503 (UNAVAILABLE).`, canvas.ErrorMessage(err))
		assert.Equal(t, []string{"partial"}, got)
		assert.Len(t, fake.Requests(), 1, "the stream is not resumed")
	})
	t.Run("EmitError", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "a"}`, `{"text": "b"}`, `{"text": "c"}`}})
		p := mustGemini(t, url)

		stop := errors.New("client gone")
		n := 0
		_, err := p.Stream(context.Background(), chatRequest(), func(model.Chunk) error {
			n++
			return stop
		})
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, 1, n)
	})
}

func TestProvider_UpstreamError(t *testing.T) {
	calls := map[string]func(p model.Provider) error{
		"Complete": func(p model.Provider) error {
			_, err := p.Complete(context.Background(), chatRequest())
			return err
		},
		"Stream": func(p model.Provider) error {
			_, err := p.Stream(context.Background(), chatRequest(), func(model.Chunk) error { return nil })
			return err
		},
	}
	tests := []struct {
		name       string
		fake       *fakeGemini
		want       string
		retryAfter time.Duration
		retryable  bool
	}{
		{"BadRequest", &fakeGemini{Fail: []int{400}},
			`Model provider "gemini" answered HTTP 400 (INVALID_ARGUMENT).`, 0, false},
		{"Forbidden", &fakeGemini{Fail: []int{403}},
			`Model provider "gemini" answered HTTP 403 (PERMISSION_DENIED).`, 0, false},
		{"RateLimitedRetryAfter", &fakeGemini{Fail: []int{429}, RetryAfter: "7"},
			`Model provider "gemini" answered HTTP 429 (RESOURCE_EXHAUSTED).`, 7 * time.Second, true},
		{"RateLimitedRetryInfo", &fakeGemini{Fail: []int{429}, RetryDelay: "37.5s"},
			`Model provider "gemini" answered HTTP 429 (RESOURCE_EXHAUSTED).`, 37500 * time.Millisecond, true},
		{"RetryAfterWinsOverRetryInfo", &fakeGemini{Fail: []int{429}, RetryAfter: "3", RetryDelay: "37s"},
			`Model provider "gemini" answered HTTP 429 (RESOURCE_EXHAUSTED).`, 3 * time.Second, true},
		{"ServerError", &fakeGemini{Fail: []int{500}},
			`Model provider "gemini" answered HTTP 500 (INTERNAL).`, 0, true},
		{"PlainTextBody", &fakeGemini{Fail: []int{503}, PlainError: true},
			`Model provider "gemini" answered HTTP 503.`, 0, true},
	}
	for name, call := range calls {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				fake, url := newFake(t, &fakeGemini{Fail: tt.fake.Fail, RetryAfter: tt.fake.RetryAfter,
					RetryDelay: tt.fake.RetryDelay, PlainError: tt.fake.PlainError, Parts: []string{`{"text": "late"}`}})
				p := mustGemini(t, url)

				err := call(p)
				require.Error(t, err)
				assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
				assert.Equal(t, tt.want, canvas.ErrorMessage(err))
				assert.NotContains(t, canvas.ErrorMessage(err), "secret detail")
				assert.NotContains(t, err.Error(), testKey)
				var ve *model.VendorError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tt.fake.Fail[0], ve.Status)
				assert.Equal(t, tt.retryAfter, ve.RetryAfter)
				assert.Equal(t, tt.retryable, ve.Retryable())
				assert.Len(t, fake.Requests(), 1, "one attempt only")
			})
		}
	}
	t.Run("Unreachable", func(t *testing.T) {
		p := mustGemini(t, "http://127.0.0.1:1")

		_, err := p.Complete(context.Background(), chatRequest())
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "gemini" failed.`, canvas.ErrorMessage(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.True(t, ve.Retryable())
	})
}

func TestProvider_Cancel(t *testing.T) {
	t.Run("Complete", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Hang: true, Parts: []string{`{"text": "never"}`}})
		p := mustGemini(t, url)

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Complete(ctx, chatRequest())
		require.Error(t, err)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("Stream", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Hang: true, Parts: []string{`{"text": "first"}`, `{"text": "never"}`}})
		p := mustGemini(t, url)

		ctx, cancel := context.WithCancel(context.Background())
		var got []string
		_, err := p.Stream(ctx, chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			cancel()
			return nil
		})
		require.Error(t, err)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []string{"first"}, got)
	})
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cred model.Credential
		want string
	}{
		{"NoKey", model.Credential{Name: "g"}, `Gemini credential "g" has no key.`},
		{"UnknownBackend", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "palm"}},
			`Gemini credential "g": settings.backend must be "gemini-api" or "vertex".`},
		{"VertexNoProject", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "vertex", Location: "us-central1"}},
			`Gemini credential "g" on Vertex needs settings.project.`},
		{"VertexNoLocation", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "vertex", Project: "p"}},
			`Gemini credential "g" on Vertex needs settings.location.`},
		{"VertexNeither", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "vertex"}},
			`Gemini credential "g" on Vertex needs settings.project and settings.location.`},
		{"VertexBadLocation", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "vertex", Project: "p", Location: "evil.example/#"}},
			`Gemini credential "g": settings.location "evil.example/#" is not a Google Cloud location.`},
		{"VertexBadProject", model.Credential{Name: "g", APIKey: testKey, Settings: model.Settings{Backend: "vertex", Project: "a/../b", Location: "us"}},
			`Gemini credential "g": settings.project "a/../b" is not a Google Cloud project id.`},
		{"VertexJSONNotServiceAccount", model.Credential{Name: "g",
			APIKey:   `{"type": "external_account", "audience": "secret-audience", "credential_source": {"file": "/etc/passwd"}}`,
			Settings: model.Settings{Backend: "vertex", Project: "p", Location: "us-central1"}},
			`Gemini credential "g": a JSON key must be a Google Cloud service-account key.`},
		{"VertexBrokenServiceAccount", model.Credential{Name: "g",
			APIKey:   `{"type": "service_account", "private_key": "secret-not-a-key"}`,
			Settings: model.Settings{Backend: "vertex", Project: "p", Location: "us-central1"}},
			`Gemini credential "g": a JSON key must be a Google Cloud service-account key.`},
		{"BadBaseURL", model.Credential{Name: "g", APIKey: testKey, BaseURL: "localhost:8080"},
			`Gemini credential "g": baseUrl "localhost:8080" is not an http(s) URL.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.New(gemini.Options{Credential: tt.cred})
			assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			assert.Equal(t, tt.want, canvas.ErrorMessage(err))
			assert.NotContains(t, err.Error(), "secret")
		})
	}
	t.Run("Factory", func(t *testing.T) {
		p, err := gemini.Factory(model.Credential{Provider: canvas.ProviderGemini, APIKey: testKey})
		require.NoError(t, err)
		assert.Equal(t, "gemini", p.Name())
	})
	t.Run("DefaultName", func(t *testing.T) {
		p, err := gemini.New(gemini.Options{Credential: model.Credential{APIKey: testKey}})
		require.NoError(t, err)
		assert.Equal(t, canvas.ProviderGemini, p.Name())
	})
}
