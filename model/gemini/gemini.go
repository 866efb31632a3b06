package gemini

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"google.golang.org/genai"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Backends a credential's Settings.Backend may name.
const (
	BackendGeminiAPI = "gemini-api"
	BackendVertex    = "vertex"
)

// DefaultGeminiURL is the API root of the Gemini API. The Vertex root
// depends on the location (see vertexURL).
const DefaultGeminiURL = "https://generativelanguage.googleapis.com/"

// cloudPlatformScope is the OAuth scope a service account's token is
// asked for.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// The shapes of a Google Cloud project id (possibly domain-scoped,
// "example.com:project") and of a location ("us-central1", "global").
var (
	projectID  = regexp.MustCompile(`^[a-z0-9][a-z0-9.:-]{0,99}$`)
	locationID = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
)

// Options configure a Gemini provider.
type Options struct {
	// Credential names the backend (Settings.Backend "gemini-api", the
	// default, or "vertex" with Settings.Project and Settings.Location),
	// holds the key (APIKey) and may replace the API root (BaseURL) and add
	// headers (Settings.Headers).
	Credential model.Credential
	// HTTPClient makes the requests; nil: a client of its own whose
	// transport bounds the wait for response headers by
	// Credential.Settings.Timeout().
	HTTPClient *http.Client
}

// Provider is the model.Provider of Google's Gemini models, on the Gemini
// API or on Vertex AI.
type Provider struct {
	name   string
	models *genai.Models
}

var _ model.Provider = (*Provider)(nil)

// New returns the provider of opts.Credential. It is a VALIDATION error
// when the key is missing, the backend is unknown, a Vertex credential
// lacks its project or location (or they are not shaped as Google Cloud
// names them), a JSON key is not a service-account key, or the base URL
// is not an http(s) URL.
//
// On the Gemini API the key is an API key, sent as x-goog-api-key. On
// Vertex it is either a Vertex API key, sent the same way to the project's
// regional endpoint, or the JSON key of a service account (a value
// starting with "{" whose type is "service_account"), whose access tokens,
// asked of the key's token_uri, are sent as Authorization: Bearer. No
// other form is accepted. The client library looks at GOOGLE_* variables,
// but New gives it the backend, key, project, location and API root
// explicitly, so that none of them, nor the machine's default
// credentials, changes what the provider does.
func New(opts Options) (*Provider, error) {
	c := opts.Credential
	name := c.Provider
	if name == "" {
		name = canvas.ProviderGemini
	}
	if strings.TrimSpace(c.APIKey) == "" {
		return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q has no key.", c.Name)
	}
	if c.BaseURL != "" && !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q: baseUrl %q is not an http(s) URL.", c.Name, c.BaseURL)
	}

	base := model.VendorClient(opts.HTTPClient, c.Settings.Timeout())
	cc := &genai.ClientConfig{
		HTTPOptions: genai.HTTPOptions{
			BaseURL: c.BaseURL,
			Headers: http.Header{},
			// One attempt: the Caller retries.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	}
	for k, v := range c.Settings.Headers {
		cc.HTTPOptions.Headers.Set(k, v)
	}
	tr := &transport{}

	switch c.Settings.Backend {
	case "", BackendGeminiAPI:
		cc.Backend = genai.BackendGeminiAPI
		cc.APIKey = c.APIKey
		if cc.HTTPOptions.BaseURL == "" {
			cc.HTTPOptions.BaseURL = DefaultGeminiURL
		}
	case BackendVertex:
		var missing []string
		if c.Settings.Project == "" {
			missing = append(missing, "settings.project")
		}
		if c.Settings.Location == "" {
			missing = append(missing, "settings.location")
		}
		if len(missing) > 0 {
			return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q on Vertex needs %s.", c.Name, strings.Join(missing, " and "))
		}
		// Both go into the address (the location into the host name).
		if !projectID.MatchString(c.Settings.Project) {
			return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q: settings.project %q is not a Google Cloud project id.", c.Name, c.Settings.Project)
		}
		if !locationID.MatchString(c.Settings.Location) {
			return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q: settings.location %q is not a Google Cloud location.", c.Name, c.Settings.Location)
		}
		cc.Backend = genai.BackendVertexAI
		cc.Project = c.Settings.Project
		cc.Location = c.Settings.Location
		if cc.HTTPOptions.BaseURL == "" {
			cc.HTTPOptions.BaseURL = vertexURL(c.Settings.Location)
		}
		if key := strings.TrimSpace(c.APIKey); strings.HasPrefix(key, "{") {
			creds, err := serviceAccount(c, []byte(key), base)
			if err != nil {
				return nil, err
			}
			cc.Credentials = creds
			tr.creds = creds
		} else {
			cc.APIKey = c.APIKey
		}
	default:
		return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q: settings.backend must be %q or %q.", c.Name, BackendGeminiAPI, BackendVertex)
	}

	// The client's transport records each response's headers for the
	// call that made it (the SDK's errors do not carry them) and, for a
	// service account, authorizes the request: the SDK adds credentials
	// only to a client of its own making.
	client := *base
	tr.base = client.Transport
	if tr.base == nil {
		tr.base = http.DefaultTransport
	}
	client.Transport = tr
	cc.HTTPClient = &client

	gc, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		// The SDK's message prints the whole configuration, key included:
		// it is neither shown nor kept.
		return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q could not configure a client.", c.Name)
	}
	return &Provider{name: name, models: gc.Models}, nil
}

// Factory returns the provider of c with a client of its own: the
// model.Factory of canvas.ProviderGemini.
func Factory(c model.Credential) (model.Provider, error) {
	return New(Options{Credential: c})
}

// Name returns the credential's provider name.
func (p *Provider) Name() string { return p.name }

// Complete calls models/{model}:generateContent once and returns the first
// candidate.
func (p *Provider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	contents, config, err := params(req)
	if err != nil {
		return nil, err
	}
	call := &callInfo{}
	res, err := p.models.GenerateContent(withCall(ctx, call), req.Model, contents, config)
	if err != nil {
		return nil, p.failure(ctx, call, err)
	}
	var acc accumulator
	acc.add(res)
	return acc.result(req), nil
}

// Stream calls models/{model}:streamGenerateContent?alt=sse once, emits
// each text part as it arrives and each function call as one delta holding
// its whole arguments (Gemini sends a call whole), and returns what
// Complete would. An error event inside the stream is a PROVIDER_ERROR.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	contents, config, err := params(req)
	if err != nil {
		return nil, err
	}
	call := &callInfo{}
	var acc accumulator
	for res, err := range p.models.GenerateContentStream(withCall(ctx, call), req.Model, contents, config) {
		if err != nil {
			return nil, p.failure(ctx, call, err)
		}
		for _, c := range acc.add(res) {
			if emit == nil {
				continue
			}
			if err := emit(c); err != nil {
				return nil, err
			}
		}
	}
	return acc.result(req), nil
}

// failure returns the PROVIDER_ERROR of a failed call: the status and
// canonical code of the SDK's APIError (or of a refused token request),
// with the response's Retry-After, or the RetryInfo detail of the error
// body when the response has none.
func (p *Provider) failure(ctx context.Context, call *callInfo, err error) error {
	header := call.Header()
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	var authErr *auth.Error
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiErrPtr) && apiErrPtr != nil:
		apiErr = *apiErrPtr
	case errors.As(err, &authErr) && authErr.Response != nil:
		return model.Failure(ctx, p.name, authErr.Response.StatusCode, "", authErr.Response.Header, err)
	default:
		return model.Failure(ctx, p.name, 0, "", nil, err)
	}
	if d := retryInfo(apiErr.Details); d != "" && model.RetryAfter(header) == 0 {
		header = header.Clone()
		if header == nil {
			header = http.Header{}
		}
		header.Set("Retry-After", d)
	}
	return model.Failure(ctx, p.name, apiErr.Code, canonicalCode(apiErr.Status), header, err)
}

// canonicalCode returns status when it is a canonical error code such as
// RESOURCE_EXHAUSTED; the SDK puts the HTTP status line there when the
// body held no error object.
func canonicalCode(status string) string {
	if status == "" {
		return ""
	}
	for _, r := range status {
		if (r < 'A' || r > 'Z') && r != '_' {
			return ""
		}
	}
	return status
}

// retryInfo returns the delay of a google.rpc.RetryInfo error detail in
// seconds ("37" for "37s", "0.5" for "0.5s"), or "".
func retryInfo(details []map[string]any) string {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		delay, _ := d["retryDelay"].(string)
		if s, ok := strings.CutSuffix(delay, "s"); ok && s != "" {
			return s
		}
	}
	return ""
}

// vertexURL returns the Vertex API root of location, as the SDK chooses it
// for a project and location.
func vertexURL(location string) string {
	switch location {
	case "global":
		return "https://aiplatform.googleapis.com/"
	case "us", "eu":
		return fmt.Sprintf("https://aiplatform.%s.rep.googleapis.com/", location)
	}
	return fmt.Sprintf("https://%s-aiplatform.googleapis.com/", location)
}

// serviceAccount returns the credentials of a service account's JSON key.
// Only that type is read (an external-account key could make the library
// read files or run programs), the token requests go through base, and the
// library's logger is silenced (it would otherwise follow an environment
// variable). The library's message is not kept: it may quote the key.
func serviceAccount(c model.Credential, key []byte, base *http.Client) (*auth.Credentials, error) {
	creds, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, key, &credentials.DetectOptions{
		Scopes: []string{cloudPlatformScope},
		Client: base,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, canvas.Errorf(canvas.EINVALID, "Gemini credential %q: a JSON key must be a Google Cloud service-account key.", c.Name)
	}
	return creds, nil
}
