package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/anthropic"
)

// chatRequest is a rendered request with two system messages and every
// setting.
func chatRequest() model.Request {
	return model.Request{
		Model: "claude-test",
		Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "You are terse."},
			{Role: canvas.RoleUser, Content: "Say hi."},
			{Role: canvas.RoleSystem, Content: "Answer in English."},
		},
		Temperature: ptr(0.25),
		MaxTokens:   ptr(64),
		TopP:        ptr(0.5),
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    model.Credential
		path string
	}{
		{"RelativeBaseURL", model.Credential{BaseURL: "api.anthropic.com"}, "/json/baseUrl"},
		{"FTPBaseURL", model.Credential{BaseURL: "ftp://example.com"}, "/json/baseUrl"},
		{"HostlessBaseURL", model.Credential{BaseURL: "http://"}, "/json/baseUrl"},
		{"HeaderName", model.Credential{Settings: model.Settings{Headers: map[string]string{"X Bad": "v"}}}, "/json/settings/headers"},
		{"HeaderValue", model.Credential{Settings: model.Settings{Headers: map[string]string{"X-Ok": "a\r\nb"}}}, "/json/settings/headers"},
		{"APIVersion", model.Credential{Settings: model.Settings{APIVersion: "latest"}}, "/json/settings/apiVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.APIKey = testKey
			_, err := anthropic.New(anthropic.Options{Credential: tc.c})
			require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			var e *canvas.Error
			require.ErrorAs(t, err, &e)
			require.Len(t, e.Details, 1)
			assert.Equal(t, tc.path, e.Details[0].Path)
			assert.NotContains(t, err.Error(), testKey)
		})
	}
	t.Run("Name", func(t *testing.T) {
		p, err := anthropic.Factory(model.Credential{APIKey: testKey})
		require.NoError(t, err)
		assert.Equal(t, canvas.ProviderAnthropic, p.Name())
		p, err = anthropic.Factory(model.Credential{Provider: "claude-proxy"})
		require.NoError(t, err)
		assert.Equal(t, "claude-proxy", p.Name())
	})
}

func TestProvider_Complete(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"Hi", " there"}}}})
		p := mustProvider(t, url)

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, &model.Result{
			Text: "Hi there", Usage: model.Usage{InputTokens: 16, OutputTokens: 7},
			Model: "claude-test-20260101", FinishReason: "stop",
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		// The API version the SDK speaks refuses temperature and top_p.
		assert.Equal(t, mustJSON(t, `{
			"model": "claude-test", "max_tokens": 64,
			"system": [{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Answer in English."}],
			"messages": [{"role": "user", "content": [{"type": "text", "text": "Say hi."}]}]
		}`), any(reqs[0]))
		assert.Equal(t, "/v1/messages", fake.Path(0))
		h := fake.Header(0)
		assert.Equal(t, testKey, h.Get("X-Api-Key"))
		assert.Empty(t, h.Values("Authorization"), "the key goes in x-api-key only")
		assert.Equal(t, anthropic.SamplingRemoved, h.Get("Anthropic-Version"))
		assert.Equal(t, "canvas", h.Get("X-Team"))
		assert.Equal(t, "0", h.Get("X-Stainless-Retry-Count"))
	})
	t.Run("DefaultMaxTokens", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		p := mustProvider(t, url)

		_, err := p.Complete(context.Background(), model.Request{Model: "m", Messages: []model.Message{{Role: canvas.RoleUser, Content: "a"}}})
		require.NoError(t, err)
		require.Len(t, fake.Requests(), 1)
		assert.Equal(t, mustJSON(t, `{"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}`),
			any(fake.Requests()[0]))
	})
	t.Run("SamplingOnOlderAPIVersion", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		p := mustProvider(t, url, func(c *model.Credential) { c.Settings.APIVersion = "2023-06-01" })

		_, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		_, err = p.Stream(context.Background(), chatRequest(), nil)
		require.NoError(t, err)
		for i, body := range fake.Requests() {
			assert.Equal(t, "2023-06-01", fake.Header(i).Get("Anthropic-Version"))
			assert.Equal(t, 0.25, body["temperature"])
			assert.Equal(t, 0.5, body["top_p"])
		}
		assert.Len(t, fake.Requests(), 2)
	})
	t.Run("NoEnvironment", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		elsewhere, other := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"no"}}}})
		t.Setenv("ANTHROPIC_BASE_URL", other)
		t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
		t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
		t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
		t.Setenv("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE", "content")

		res, err := mustProvider(t, url).Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text)
		assert.Empty(t, elsewhere.Requests())
		require.Len(t, fake.Requests(), 1)
		h := fake.Header(0)
		assert.Equal(t, testKey, h.Get("X-Api-Key"))
		assert.Empty(t, h.Values("Authorization"))
		assert.Empty(t, h.Values("X-From-Env"))
	})
	t.Run("HTTPClientAndTimeout", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		var seen []string
		client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			seen = append(seen, r.URL.Path)
			return http.DefaultTransport.RoundTrip(r)
		})}
		c := model.Credential{APIKey: testKey, BaseURL: url, Settings: model.Settings{TimeoutSeconds: 42}}
		p, err := anthropic.New(anthropic.Options{Credential: c, HTTPClient: client})
		require.NoError(t, err)
		_, err = p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, []string{"/v1/messages"}, seen)
		assert.Equal(t, "42", fake.Header(0).Get("X-Stainless-Timeout"), "the credential's timeout bounds the call")
	})
	t.Run("BaseURL", func(t *testing.T) {
		for _, suffix := range []string{"", "/", "/v1", "/v1/"} {
			fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
			p := mustProvider(t, url+suffix)
			_, err := p.Complete(context.Background(), chatRequest())
			require.NoError(t, err, suffix)
			assert.Equal(t, "/v1/messages", fake.Path(0), suffix)
		}
	})
	t.Run("ModelAbsent", func(t *testing.T) {
		srv := newRawServer(t, `{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
			"stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}`)
		res, err := mustProvider(t, srv).Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "claude-test", res.Model)
	})
	t.Run("FinishReason", func(t *testing.T) {
		for stop, want := range map[string]string{
			"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
			"model_context_window_exceeded": "length", "refusal": "content_filter", "pause_turn": "pause_turn",
		} {
			_, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}, StopReason: stop})
			res, err := mustProvider(t, url).Complete(context.Background(), chatRequest())
			require.NoError(t, err)
			assert.Equal(t, want, res.FinishReason, stop)
		}
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newRawServer answers every request with body as JSON.
func newRawServer(t *testing.T, body string) string {
	t.Helper()
	srv, url := newFake(t, &fakeAnthropic{})
	srv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
	return url
}

func TestProvider_Errors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code      string
		retryable bool
	}{
		{400, "invalid_request_error", false},
		{401, "authentication_error", false},
		{404, "not_found_error", false},
		{429, "rate_limit_error", true},
		{500, "api_error", true},
		{529, "overloaded_error", true},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.code
			if stream {
				name += "/Stream"
			}
			t.Run(name, func(t *testing.T) {
				fake, url := newFake(t, &fakeAnthropic{Fail: []int{tc.status}, Blocks: []fakeBlock{{Text: []string{"ok"}}}})
				p := mustProvider(t, url)

				var err error
				if stream {
					_, err = p.Stream(context.Background(), chatRequest(), func(model.Chunk) error { return nil })
				} else {
					_, err = p.Complete(context.Background(), chatRequest())
				}
				require.Error(t, err)
				assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
				var e *canvas.Error
				require.ErrorAs(t, err, &e)
				assert.Contains(t, e.Message, "anthropic")
				assert.Contains(t, e.Message, "HTTP "+strconv.Itoa(tc.status))
				assert.Contains(t, e.Message, tc.code)
				assert.NotContains(t, e.Message, "secret detail")
				assert.NotContains(t, err.Error(), testKey, "nor in the cause")

				var ve *model.VendorError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tc.status, ve.Status)
				assert.Equal(t, tc.code, ve.Code)
				assert.Equal(t, 7*time.Second, ve.RetryAfter)
				assert.Equal(t, tc.retryable, ve.Retryable())
				assert.Len(t, fake.Requests(), 1, "the SDK must not retry")
			})
		}
	}
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := mustProvider(t, srv.URL).Complete(context.Background(), chatRequest())
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Zero(t, ve.Status)
		assert.True(t, ve.Retryable())
	})
}

func TestProvider_Cancel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "Complete"
		if stream {
			name = "Stream"
		}
		t.Run(name, func(t *testing.T) {
			_, url := newFake(t, &fakeAnthropic{Hang: true, Blocks: []fakeBlock{{Text: []string{"a", "b"}}}})
			p := mustProvider(t, url)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)

			start := time.Now()
			var err error
			if stream {
				_, err = p.Stream(ctx, chatRequest(), func(model.Chunk) error { return nil })
			} else {
				_, err = p.Complete(ctx, chatRequest())
			}
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
		})
	}
}
