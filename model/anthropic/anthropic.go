package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"golang.org/x/net/http/httpguts"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Anthropic defaults.
const (
	// DefaultBaseURL is the root of the Anthropic API; requests go to
	// <root>/v1/messages.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is the max_tokens of a request that sets none: the
	// Messages API requires one.
	DefaultMaxTokens = 4096
	// SamplingRemoved is the API version (anthropic-version) that removed
	// temperature and top_p, the one the SDK sends by default.
	SamplingRemoved = "2026-10-21"
)

// Options configure an Anthropic provider.
type Options struct {
	// Credential holds the API key (sent as x-api-key), the API root
	// (BaseURL, empty: DefaultBaseURL; a trailing "/v1" is dropped since
	// the paths carry it), the headers sent with every request and the
	// API version (Settings.APIVersion, sent as anthropic-version; empty:
	// the SDK's own).
	Credential model.Credential
	// HTTPClient makes the requests; nil: a client of its own whose
	// transport bounds the wait for response headers by the credential's
	// timeout.
	HTTPClient *http.Client
}

// Provider is the model.Provider of the Anthropic Messages API.
type Provider struct {
	name     string
	messages sdk.MessageService
	// sampling is set when the API version takes temperature and top_p.
	sampling bool
}

var _ model.Provider = (*Provider)(nil)

// New returns a provider calling the Anthropic API with opts.Credential. It
// reads no environment variable, and makes one attempt per call: the SDK's
// retries are off. It fails with VALIDATION when the credential's base URL
// is not an absolute http(s) URL, one of its headers is malformed or its
// API version is not a date.
func New(opts Options) (*Provider, error) {
	c := opts.Credential
	base, err := baseURL(c.BaseURL)
	if err != nil {
		return nil, err
	}
	for k, v := range c.Settings.Headers {
		if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			return nil, canvas.Invalid("The credential's headers are not valid.",
				canvas.Detail{Path: "/json/settings/headers", Message: "header names must be HTTP tokens and values must not hold control characters"})
		}
	}
	version := c.Settings.APIVersion
	if version != "" {
		if _, err := time.Parse(time.DateOnly, version); err != nil {
			return nil, canvas.Invalid("The credential's API version is not valid.",
				canvas.Detail{Path: "/json/settings/apiVersion", Message: "must be an Anthropic API version, a date such as 2023-06-01"})
		}
	}
	client := model.VendorClient(opts.HTTPClient, c.Settings.Timeout())
	// The service is built from explicit options only: sdk.NewClient would
	// read ANTHROPIC_* variables and profile files, and the SDK's tracing
	// reads its own variables unless told. The model calls' spans are the
	// engine's.
	ropts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(c.Settings.Timeout()),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	for k, v := range c.Settings.Headers {
		ropts = append(ropts, option.WithHeader(k, v))
	}
	if version != "" {
		ropts = append(ropts, option.WithHeader("anthropic-version", version))
	}
	// The key goes in x-api-key, as the API documents: option.WithAPIKey
	// would send it as a bearer token.
	if c.APIKey != "" {
		ropts = append(ropts, option.WithHeader("x-api-key", c.APIKey))
	}
	name := c.Provider
	if name == "" {
		name = canvas.ProviderAnthropic
	}
	return &Provider{name: name, messages: sdk.NewMessageService(ropts...),
		sampling: version != "" && version < SamplingRemoved}, nil
}

// Factory returns New(Options{Credential: c}): the model.Factory that an
// embedder registers as model.Kinds{canvas.ProviderAnthropic: Factory}.
func Factory(c model.Credential) (model.Provider, error) {
	return New(Options{Credential: c})
}

// baseURL checks a credential's base URL and returns the API root to send
// requests under.
func baseURL(raw string) (string, error) {
	if raw == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", canvas.Invalid("The credential's base URL is not valid.",
			canvas.Detail{Path: "/json/baseUrl", Message: "must be an absolute http(s) URL"})
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	return u.String(), nil
}

// Name returns the credential's provider name.
func (p *Provider) Name() string { return p.name }

// Complete calls POST /v1/messages.
func (p *Provider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	params, out, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	msg, err := p.messages.New(ctx, params, p.sampled(req)...)
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	return out.result(msg, req.Model), nil
}

// Stream calls POST /v1/messages with stream set. It emits a Chunk per
// text_delta, a tool-call Chunk when a tool_use block starts (its ID and
// name) and per input_json_delta, and the structured output's JSON as
// text; it returns what Complete would. An error event in the stream, or a
// stream cut before message_stop, is a PROVIDER_ERROR.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	params, out, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	if emit == nil {
		emit = func(model.Chunk) error { return nil }
	}
	stream := p.messages.NewStreaming(ctx, params, p.sampled(req)...)
	defer stream.Close()

	var msg sdk.Message
	blocks := map[int64]*streamBlock{}
	calls, stopped := 0, false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, p.failure(ctx, err)
		}
		switch ev.Type {
		case "content_block_start":
			b := &streamBlock{kind: ev.ContentBlock.Type}
			blocks[ev.Index] = b
			if b.kind != "tool_use" {
				continue
			}
			if out.isOutput(ev.ContentBlock.Name) {
				b.kind = "output"
				continue
			}
			b.call = calls
			calls++
			if err := emit(model.Chunk{ToolCall: &model.ToolCallDelta{Index: b.call, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}); err != nil {
				return nil, err
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				continue
			}
			if err := b.delta(ev.Delta, out, emit); err != nil {
				return nil, err
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			if b == nil || b.kind != "output" {
				continue
			}
			// A wrapped output, or one streamed without deltas, is emitted
			// whole, so that the chunks add up to the result's text.
			if text := out.text(msg.Content[ev.Index].Input); b.emitted == "" && text != "" {
				if err := emit(model.Chunk{Text: text}); err != nil {
					return nil, err
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failure(ctx, err)
	}
	if !stopped {
		return nil, p.failure(ctx, io.ErrUnexpectedEOF)
	}
	return out.result(&msg, req.Model), nil
}

// sampled returns the options that send req's temperature and top_p, which
// the SDK's types no longer carry, when the credential's API version takes
// them. Under a later version they are left out: the API refuses them.
func (p *Provider) sampled(req model.Request) []option.RequestOption {
	if !p.sampling {
		return nil
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	if req.TopP != nil {
		opts = append(opts, option.WithJSONSet("top_p", *req.TopP))
	}
	return opts
}

// streamBlock is what Stream tracks of one content block: its kind
// ("text", "tool_use", "output" for the structured output's tool, ...),
// the index of its tool call among the answer's calls, and the structured
// output text it emitted.
type streamBlock struct {
	kind    string
	call    int
	emitted string
}

// delta emits the chunk of one content_block_delta event.
func (b *streamBlock) delta(d sdk.MessageStreamEventUnionDelta, out *outputTool, emit func(model.Chunk) error) error {
	switch {
	case d.Type == "text_delta" && d.Text != "":
		return emit(model.Chunk{Text: d.Text})
	case d.Type != "input_json_delta" || d.PartialJSON == "":
		return nil
	case b.kind == "tool_use":
		return emit(model.Chunk{ToolCall: &model.ToolCallDelta{Index: b.call, Arguments: d.PartialJSON}})
	case b.kind == "output" && !out.wrapped:
		b.emitted += d.PartialJSON
		return emit(model.Chunk{Text: d.PartialJSON})
	}
	return nil
}

// failure returns the PROVIDER_ERROR of a failed call. The vendor's error
// type ("rate_limit_error", "overloaded_error", ...) is its code. An error
// event inside a stream arrives on a 200 response: its status is the one
// the API documents for its type, so that the Caller retries what it may.
func (p *Provider) failure(ctx context.Context, err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return model.Failure(ctx, p.name, 0, "", nil, err)
	}
	status, code := apiErr.StatusCode, string(apiErr.Type())
	var header http.Header
	if apiErr.Response != nil {
		header = apiErr.Response.Header
	}
	if status < 400 {
		status = errorStatus(code)
	}
	return model.Failure(ctx, p.name, status, code, header, err)
}

// errorStatus is the HTTP status the Anthropic API documents for an error
// type; an unknown type is a server error.
func errorStatus(code string) int {
	switch code {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}
