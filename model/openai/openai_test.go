package openai_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

// mustOpenAI returns a provider talking to baseURL with the test key.
func mustOpenAI(t *testing.T, opts openai.Options) *openai.Provider {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "sk-test"
	}
	p, err := openai.New(opts)
	require.NoError(t, err)
	return p
}

func ptr[T any](v T) *T { return &v }

// chatRequest is a rendered two-message request with every setting.
func chatRequest() model.Request {
	return model.Request{
		Model: "gpt-test",
		Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "You are terse."},
			{Role: canvas.RoleUser, Content: "Say hi."},
		},
		Temperature: ptr(0.25),
		MaxTokens:   ptr(64),
		TopP:        ptr(0.5),
	}
}

func TestOpenAI_Complete(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hi", " there"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, &model.Result{
			Text: "Hi there", Usage: model.Usage{InputTokens: 11, OutputTokens: 2},
			Model: "gpt-test-2025", FinishReason: "stop",
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, mustJSON(t, `{
			"model": "gpt-test",
			"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}],
			"temperature": 0.25, "max_tokens": 64, "top_p": 0.5
		}`), any(reqs[0]))
		assert.Equal(t, "Bearer sk-test", fake.Header(0).Get("Authorization"))
	})
	t.Run("DefaultsLeftOut", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url, MaxCompletionTokens: true})

		req := model.Request{Model: "m", Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "a"}, {Role: canvas.RoleAssistant, Content: "b"},
		}}
		_, err := p.Complete(context.Background(), req)
		require.NoError(t, err)
		req.MaxTokens = ptr(7)
		_, err = p.Complete(context.Background(), req)
		require.NoError(t, err)

		reqs := fake.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, mustJSON(t, `{"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}`), any(reqs[0]))
		assert.Equal(t, 7.0, reqs[1]["max_completion_tokens"])
		assert.NotContains(t, reqs[1], "max_tokens")
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{`{"answer": "hi"}`}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		schema := `{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}`
		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(schema)}
		res, err := p.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.NoError(t, model.ValidateOutput(req.StructuredOutput.Schema, res.Text))

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, mustJSON(t, `{"type": "json_schema", "json_schema": {"name": "output", "schema": `+schema+`}}`), reqs[0]["response_format"])
	})
	t.Run("StructuredOutputDisabled", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: false, Schema: []byte(`{"type": "object"}`)}
		_, err := p.Complete(context.Background(), req)
		require.NoError(t, err)
		require.Len(t, fake.Requests(), 1)
		assert.NotContains(t, fake.Requests()[0], "response_format")
	})
	t.Run("InvalidSchema", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(`{"type": 5}`)}
		_, err := p.Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
	t.Run("IgnoresEnvironment", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
		t.Setenv("OPENAI_API_KEY", "sk-from-env")
		t.Setenv("OPENAI_ORG_ID", "org-env")
		t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Env: 1")
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		_, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		h := fake.Header(0)
		assert.Equal(t, "Bearer sk-test", h.Get("Authorization"))
		assert.Empty(t, h.Get("OpenAI-Organization"))
		assert.Empty(t, h.Get("X-From-Env"))
	})
}

func TestOpenAI_Stream(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hel", "lo", ", world"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		var got []string
		res, err := p.Stream(context.Background(), chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"Hel", "lo", ", world"}, got)
		assert.Equal(t, &model.Result{
			Text: "Hello, world", Usage: model.Usage{InputTokens: 11, OutputTokens: 3},
			Model: "gpt-test-2025", FinishReason: "stop",
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, true, reqs[0]["stream"])
		assert.Equal(t, mustJSON(t, `{"include_usage": true}`), reqs[0]["stream_options"])
		assert.Equal(t, 0.25, reqs[0]["temperature"])
		assert.Equal(t, 64.0, reqs[0]["max_tokens"])
		assert.Equal(t, 0.5, reqs[0]["top_p"])
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{`{"n":`, ` 1}`}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: []byte(`{"type": "object"}`)}
		res, err := p.Stream(context.Background(), req, nil)
		require.NoError(t, err)
		assert.Equal(t, `{"n": 1}`, res.Text)
		assert.Equal(t, mustJSON(t, `{"type": "json_schema", "json_schema": {"name": "output", "schema": {"type": "object"}}}`), fake.Requests()[0]["response_format"])
	})
	t.Run("ErrorEvent", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{StreamError: true, Chunks: []string{"partial", "never"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		var got []string
		_, err := p.Stream(context.Background(), chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "openai" failed.`, canvas.ErrorMessage(err))
		assert.Equal(t, []string{"partial"}, got)
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "server_error", ve.Code)
		assert.NotContains(t, canvas.ErrorMessage(err), "secret detail")
	})
	t.Run("EmitError", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"a", "b", "c"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

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

func TestOpenAI_UpstreamError(t *testing.T) {
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
		status     int
		want       string
		retryable  bool
		retryAfter time.Duration
	}{
		{401, `Model provider "openai" answered HTTP 401 (invalid_api_key).`, false, time.Millisecond},
		{429, `Model provider "openai" answered HTTP 429 (rate_limit_exceeded).`, true, 7 * time.Second},
		{500, `Model provider "openai" answered HTTP 500 (server_error).`, true, time.Millisecond},
	}
	for name, call := range calls {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%d", name, tt.status), func(t *testing.T) {
				fake, url := newFakeOpenAI(t, &fakeOpenAI{Fail: []int{tt.status}, Chunks: []string{"late"}})
				p := mustOpenAI(t, openai.Options{BaseURL: url})

				err := call(p)
				require.Error(t, err)
				assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
				assert.Equal(t, tt.want, canvas.ErrorMessage(err))
				assert.NotContains(t, canvas.ErrorMessage(err), "secret detail")
				assert.Len(t, fake.Requests(), 1, "no retry unless configured")

				var ve *model.VendorError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tt.status, ve.Status)
				assert.Equal(t, tt.retryable, ve.Retryable())
				assert.Equal(t, tt.retryAfter, ve.RetryAfter)
			})
		}
	}
	t.Run("Retried", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Fail: []int{500}, Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url, MaxRetries: 1})

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text)
		assert.Len(t, fake.Requests(), 2)
	})
	t.Run("Unreachable", func(t *testing.T) {
		p := mustOpenAI(t, openai.Options{BaseURL: "http://127.0.0.1:1/v1"})

		_, err := p.Complete(context.Background(), chatRequest())
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "openai" failed.`, canvas.ErrorMessage(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Zero(t, ve.Status)
		assert.True(t, ve.Retryable())
	})
}

func TestOpenAI_Hang(t *testing.T) {
	t.Run("ContextDeadline", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Hang: true, Chunks: []string{"never"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Complete(ctx, chatRequest())
		require.Error(t, err)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("StreamContextDeadline", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Hang: true, Chunks: []string{"first", "never"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		var got []string
		_, err := p.Stream(ctx, chatRequest(), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		require.Error(t, err)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, []string{"first"}, got)
	})
	t.Run("ProviderTimeout", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Hang: true, Chunks: []string{"never"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url, Timeout: 100 * time.Millisecond})

		_, err := p.Complete(context.Background(), chatRequest())
		require.Error(t, err)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "openai" did not answer in time.`, canvas.ErrorMessage(err))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestNew(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		p, err := openai.New(openai.Options{})
		require.NoError(t, err)
		assert.Equal(t, "openai", p.Name())
	})
	t.Run("BadBaseURL", func(t *testing.T) {
		_, err := openai.New(openai.Options{BaseURL: "localhost:11434"})
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	})
}
