package openai

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Factory builds the provider of an openai credential
// (canvas.ProviderOpenAI): the API at the credential's BaseURL, default
// DefaultBaseURL, with its APIKey (required) as a bearer token. Requests
// for the reasoning models (o1, o3, o4, gpt-5...) send MaxTokens as
// max_completion_tokens.
func Factory(c model.Credential) (model.Provider, error) {
	return build(c, canvas.ProviderOpenAI)
}

// CompatibleFactory builds the provider of an openai-compatible credential
// (canvas.ProviderOpenAICompatible): any server speaking the OpenAI chat
// completions API at the credential's BaseURL (required), for example
// "http://localhost:11434/v1" for Ollama. The APIKey is optional: without
// one no Authorization header is sent.
func CompatibleFactory(c model.Credential) (model.Provider, error) {
	return build(c, canvas.ProviderOpenAICompatible)
}

// AzureFactory builds the provider of an azure-openai credential
// (canvas.ProviderAzureOpenAI): the Azure OpenAI resource at the
// credential's BaseURL (required, https; plain http only on a loopback
// address), for example "https://my-resource.openai.azure.com", with
// Settings.APIVersion (required) as the api-version query parameter and
// the APIKey (required) in the api-key header. Requests go to
// /openai/deployments/{deployment}/chat/completions, where the deployment
// is Settings.Deployment, or the request's model when it is empty.
func AzureFactory(c model.Credential) (model.Provider, error) {
	return build(c, canvas.ProviderAzureOpenAI)
}

// build returns the provider of c, whose kind is kind when c names none.
func build(c model.Credential, kind string) (model.Provider, error) {
	if c.Provider == "" {
		c.Provider = kind
	}
	p, err := New(Options{Credential: c})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// config is what New builds a provider from.
type config struct {
	name            string
	timeout         time.Duration
	maxRetries      int
	reasoningByName bool
	deployment      string
	// endpoint holds the options of the base URL and the authentication.
	endpoint []option.RequestOption
	headers  [][2]string
}

// configure checks opts and returns what New builds the provider from:
// from the credential when it names a provider, else from the options of
// the server-wide back end. Every problem of a credential is one detail of
// a VALIDATION error, at the JSON pointer of the credential's field.
func configure(opts Options) (config, error) {
	c := opts.Credential
	if c.Provider == "" {
		return configureServerWide(opts)
	}
	cfg := config{name: c.Provider, timeout: c.Settings.Timeout(), headers: sortedHeaders(c.Settings.Headers)}
	var details []canvas.Detail
	problem := func(path, format string, args ...any) {
		details = append(details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	switch c.Provider {
	case canvas.ProviderOpenAI:
		base := c.BaseURL
		if base == "" {
			base = DefaultBaseURL
		}
		if !httpURL(base) {
			problem("/json/baseUrl", "baseUrl must be an absolute http(s) URL")
		}
		if c.APIKey == "" {
			problem("/json/apiKey", "apiKey is required")
		}
		cfg.reasoningByName = true
		cfg.endpoint = []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(c.APIKey)}
	case canvas.ProviderOpenAICompatible:
		switch {
		case c.BaseURL == "":
			problem("/json/baseUrl", "baseUrl is required: the API root of the compatible server")
		case !httpURL(c.BaseURL):
			problem("/json/baseUrl", "baseUrl must be an absolute http(s) URL")
		}
		cfg.endpoint = []option.RequestOption{option.WithBaseURL(c.BaseURL)}
		if c.APIKey != "" {
			cfg.endpoint = append(cfg.endpoint, option.WithAPIKey(c.APIKey))
		}
	case canvas.ProviderAzureOpenAI:
		plain := false
		switch {
		case c.BaseURL == "":
			problem("/json/baseUrl", "baseUrl is required: the endpoint of the Azure OpenAI resource")
		case !httpURL(c.BaseURL):
			problem("/json/baseUrl", "baseUrl must be an absolute https URL")
		case strings.HasPrefix(c.BaseURL, "http://"):
			if plain = loopback(c.BaseURL); !plain {
				problem("/json/baseUrl", "baseUrl must be an https URL (plain http only on a loopback address)")
			}
		}
		if c.Settings.APIVersion == "" {
			problem("/json/settings/apiVersion", "settings.apiVersion is required for Azure OpenAI, for example 2024-10-21")
		}
		if c.APIKey == "" {
			problem("/json/apiKey", "apiKey is required")
		}
		cfg.reasoningByName = true
		cfg.deployment = c.Settings.Deployment
		cfg.endpoint = []option.RequestOption{azure.WithEndpoint(c.BaseURL, c.Settings.APIVersion), azure.WithAPIKey(c.APIKey)}
		if plain {
			cfg.endpoint = append(cfg.endpoint, azure.WithUnsafeAllowHTTP())
		}
	default:
		problem("/json/provider", "provider must be %q, %q or %q", canvas.ProviderOpenAI,
			canvas.ProviderOpenAICompatible, canvas.ProviderAzureOpenAI)
	}
	if len(details) > 0 {
		return cfg, canvas.Invalid(fmt.Sprintf("The %s credential %q cannot be used.", c.Provider, c.Name), details...)
	}
	return cfg, nil
}

// configureServerWide returns the configuration of the server-wide back
// end: Options without a credential.
func configureServerWide(opts Options) (config, error) {
	cfg := config{name: opts.Name, timeout: opts.Timeout, maxRetries: max(opts.MaxRetries, 0)}
	if cfg.name == "" {
		cfg.name = "openai"
	}
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultTimeout
	}
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !httpURL(base) {
		return cfg, canvas.Invalid(fmt.Sprintf("OpenAI base URL %q is not an http(s) URL.", base),
			canvas.Detail{Path: "/json/baseUrl", Message: "baseUrl must be an absolute http(s) URL"})
	}
	cfg.endpoint = []option.RequestOption{option.WithBaseURL(base)}
	if opts.APIKey != "" {
		cfg.endpoint = append(cfg.endpoint, option.WithAPIKey(opts.APIKey))
	}
	return cfg, nil
}

// httpURL reports whether s is an absolute http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// loopback reports whether the host of URL s is localhost or a loopback
// address.
func loopback(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// sortedHeaders returns h as name-value pairs in the order of the names,
// so that requests are built alike every time.
func sortedHeaders(h map[string]string) [][2]string {
	out := make([][2]string, 0, len(h))
	for k, v := range h {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
