package openai_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

// mustFactory builds the provider of c with factory.
func mustFactory(t *testing.T, factory model.Factory, c model.Credential) model.Provider {
	t.Helper()
	p, err := factory(c)
	require.NoError(t, err)
	return p
}

// redirect is a transport that sends every request to the fake instead,
// recording the URL the provider asked for.
type redirect struct {
	to   *url.URL
	asks []string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	r.asks = append(r.asks, req.URL.String())
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	req.Host = r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestFactory(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hi"}})
		p := mustFactory(t, openai.Factory, model.Credential{Provider: canvas.ProviderOpenAI, APIKey: "sk-cred", BaseURL: url,
			Settings: model.Settings{Headers: map[string]string{"OpenAI-Project": "proj_1", "X-Team": "search"}}})
		assert.Equal(t, "openai", p.Name())

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "Hi", res.Text)
		h := fake.Header(0)
		assert.Equal(t, "Bearer sk-cred", h.Get("Authorization"))
		assert.Equal(t, "proj_1", h.Get("OpenAI-Project"))
		assert.Equal(t, "search", h.Get("X-Team"))
		assert.Equal(t, "/v1/chat/completions", fake.URL(0).Path)
	})
	t.Run("DefaultBaseURL", func(t *testing.T) {
		fake, _ := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hi"}})
		to, err := url.Parse(fake.Root())
		require.NoError(t, err)
		rt := &redirect{to: to}
		p, err := openai.New(openai.Options{Credential: model.Credential{Provider: canvas.ProviderOpenAI, APIKey: "sk-cred"},
			HTTPClient: &http.Client{Transport: rt}})
		require.NoError(t, err)

		_, err = p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, []string{"https://api.openai.com/v1/chat/completions"}, rt.asks)
	})
	t.Run("MaxCompletionTokens", func(t *testing.T) {
		tests := []struct {
			provider, model, want string
		}{
			{canvas.ProviderOpenAI, "gpt-4o", "max_tokens"},
			{canvas.ProviderOpenAI, "o1-mini", "max_completion_tokens"},
			{canvas.ProviderOpenAI, "o3", "max_completion_tokens"},
			{canvas.ProviderOpenAI, "o4-mini", "max_completion_tokens"},
			{canvas.ProviderOpenAI, "gpt-5-nano", "max_completion_tokens"},
			{canvas.ProviderOpenAICompatible, "gpt-5", "max_tokens"},
		}
		for _, tt := range tests {
			t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
				fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
				p, err := openai.New(openai.Options{Credential: model.Credential{Provider: tt.provider, APIKey: "k", BaseURL: url}})
				require.NoError(t, err)
				req := chatRequest()
				req.Model = tt.model
				_, err = p.Complete(context.Background(), req)
				require.NoError(t, err)
				body := fake.Requests()[0]
				assert.Equal(t, 64.0, body[tt.want])
				assert.Len(t, body, 5, "model, messages, temperature, top_p and one bound of tokens")
			})
		}
	})
	t.Run("OneAttempt", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Fail: []int{429}, Chunks: []string{"late"}})
		p := mustFactory(t, openai.Factory, model.Credential{Provider: canvas.ProviderOpenAI, APIKey: "sk-cred", BaseURL: url})

		_, err := p.Complete(context.Background(), chatRequest())
		assert.Equal(t, `Model provider "openai" answered HTTP 429 (rate_limit_exceeded).`, canvas.ErrorMessage(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, 7*time.Second, ve.RetryAfter)
		assert.True(t, ve.Retryable())
		assert.Len(t, fake.Requests(), 1)
	})
}

func TestCompatibleFactory(t *testing.T) {
	t.Run("WithoutKey", func(t *testing.T) {
		t.Setenv("OPENAI_API_KEY", "sk-from-env")
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hel", "lo"}})
		p := mustFactory(t, openai.CompatibleFactory, model.Credential{Provider: canvas.ProviderOpenAICompatible, BaseURL: url})
		assert.Equal(t, "openai-compatible", p.Name())

		res, err := p.Stream(context.Background(), chatRequest(), nil)
		require.NoError(t, err)
		assert.Equal(t, "Hello", res.Text)
		require.Len(t, fake.Requests(), 1)
		_, sent := fake.Header(0)["Authorization"]
		assert.False(t, sent, "no Authorization header without a key")
		assert.Equal(t, 64.0, fake.Requests()[0]["max_tokens"])
	})
	t.Run("WithKey", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustFactory(t, openai.CompatibleFactory, model.Credential{BaseURL: url, APIKey: "vllm-key"})
		assert.Equal(t, "openai-compatible", p.Name(), "the factory's kind when the credential names none")

		_, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "Bearer vllm-key", fake.Header(0).Get("Authorization"))
	})
}

func TestAzureFactory(t *testing.T) {
	azure := func(fake *fakeOpenAI, deployment string) model.Credential {
		return model.Credential{Provider: canvas.ProviderAzureOpenAI, APIKey: "az-key", BaseURL: fake.Root(),
			Settings: model.Settings{APIVersion: "2024-10-21", Deployment: deployment, Headers: map[string]string{"X-Ms-Useragent": "canvas"}}}
	}
	tests := []struct {
		name, deployment, wantPath string
	}{
		{"Deployment", "prod-gpt4o", "/openai/deployments/prod-gpt4o/chat/completions"},
		{"ModelAsDeployment", "", "/openai/deployments/gpt-test/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, _ := newFakeOpenAI(t, &fakeOpenAI{TLS: true, Chunks: []string{"Hi"}})
			p, err := openai.New(openai.Options{Credential: azure(fake, tt.deployment), HTTPClient: fake.Client()})
			require.NoError(t, err)
			assert.Equal(t, "azure-openai", p.Name())

			res, err := p.Complete(context.Background(), chatRequest())
			require.NoError(t, err)
			assert.Equal(t, "Hi", res.Text)
			_, err = p.Stream(context.Background(), chatRequest(), nil)
			require.NoError(t, err)

			require.Len(t, fake.Requests(), 2)
			for i := range 2 {
				u, h := fake.URL(i), fake.Header(i)
				assert.Equal(t, tt.wantPath, u.Path)
				assert.Equal(t, url.Values{"api-version": {"2024-10-21"}}, u.Query())
				assert.Equal(t, "az-key", h.Get("Api-Key"))
				assert.Empty(t, h.Get("Authorization"))
				assert.Equal(t, "canvas", h.Get("X-Ms-Useragent"))
			}
		})
	}
	t.Run("LoopbackHTTP", func(t *testing.T) {
		fake, _ := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Hi"}})
		p := mustFactory(t, openai.AzureFactory, azure(fake, "dev"))

		_, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "/openai/deployments/dev/chat/completions", fake.URL(0).Path)
		assert.Equal(t, "az-key", fake.Header(0).Get("Api-Key"))
	})
	t.Run("Error", func(t *testing.T) {
		fake, _ := newFakeOpenAI(t, &fakeOpenAI{TLS: true, Fail: []int{429}})
		p, err := openai.New(openai.Options{Credential: azure(fake, "prod"), HTTPClient: fake.Client()})
		require.NoError(t, err)

		_, err = p.Complete(context.Background(), chatRequest())
		assert.Equal(t, `Model provider "azure-openai" answered HTTP 429 (rate_limit_exceeded).`, canvas.ErrorMessage(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, 7*time.Second, ve.RetryAfter)
		assert.Len(t, fake.Requests(), 1)
	})
}

func TestFactory_Invalid(t *testing.T) {
	tests := []struct {
		name    string
		factory model.Factory
		cred    model.Credential
		paths   []string
	}{
		{"OpenAIWithoutKey", openai.Factory, model.Credential{}, []string{"/json/apiKey"}},
		{"OpenAIBadURL", openai.Factory, model.Credential{APIKey: "k", BaseURL: "api.openai.com/v1"}, []string{"/json/baseUrl"}},
		{"CompatibleWithoutBaseURL", openai.CompatibleFactory, model.Credential{APIKey: "k"}, []string{"/json/baseUrl"}},
		{"AzureWithoutAnything", openai.AzureFactory, model.Credential{}, []string{"/json/baseUrl", "/json/settings/apiVersion", "/json/apiKey"}},
		{"AzurePlainHTTP", openai.AzureFactory, model.Credential{APIKey: "k", BaseURL: "http://example.openai.azure.com",
			Settings: model.Settings{APIVersion: "2024-10-21"}}, []string{"/json/baseUrl"}},
		{"OtherProvider", openai.Factory, model.Credential{Provider: canvas.ProviderAnthropic, APIKey: "k"}, []string{"/json/provider"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cred.Name = "team key"
			p, err := tt.factory(tt.cred)
			assert.Nil(t, p)
			require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			var e *canvas.Error
			require.ErrorAs(t, err, &e)
			var paths []string
			for _, d := range e.Details {
				paths = append(paths, d.Path)
				assert.Contains(t, d.Message, strings.TrimPrefix(strings.ReplaceAll(d.Path, "/", "."), ".json."))
			}
			assert.Equal(t, tt.paths, paths)
			assert.Contains(t, e.Message, `"team key"`)
		})
	}
}

func TestFactory_Timeout(t *testing.T) {
	_, url := newFakeOpenAI(t, &fakeOpenAI{Hang: true})
	p := mustFactory(t, openai.CompatibleFactory, model.Credential{BaseURL: url, Settings: model.Settings{TimeoutSeconds: 1}})

	start := time.Now()
	_, err := p.Complete(context.Background(), chatRequest())
	assert.Equal(t, `Model provider "openai-compatible" did not answer in time.`, canvas.ErrorMessage(err))
	assert.Less(t, time.Since(start), 10*time.Second)
}
