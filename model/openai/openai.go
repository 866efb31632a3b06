package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// OpenAI defaults.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultTimeout = 5 * time.Minute
)

// Options configure a provider. Everything is explicit: the provider never
// reads OPENAI_* or AZURE_* environment variables.
//
// A provider is built either for a workspace credential (Credential.Provider
// set: see Factory, CompatibleFactory and AzureFactory) or, with
// Credential.Provider empty, as the server-wide back end the other fields
// describe.
type Options struct {
	// Credential is the workspace credential the provider calls the vendor
	// with. Its Provider (canvas.ProviderOpenAI, ProviderOpenAICompatible or
	// ProviderAzureOpenAI) is the provider's name and picks the wire form;
	// its BaseURL, APIKey and Settings take the place of Name, BaseURL,
	// APIKey and Timeout below, and the provider makes one attempt per call
	// (MaxRetries is ignored).
	Credential model.Credential
	// HTTPClient makes the requests; default a client of its own whose
	// transport bounds the wait for response headers by the timeout.
	HTTPClient *http.Client

	// Name is the provider's name (Provider.Name); default "openai".
	Name string
	// BaseURL is the API root, for example "http://localhost:11434/v1" for
	// Ollama; default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// Timeout bounds each attempt, streamed body included; default
	// DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a failed request (connection error, 408,
	// 409, 429, 5xx) is retried; zero means never.
	MaxRetries int
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// (what OpenAI's reasoning models require) instead of max_tokens (what
	// every OpenAI-compatible server accepts). A provider of an openai or
	// azure-openai credential also does so for the models whose names start
	// with o1, o3, o4 or gpt-5.
	MaxCompletionTokens bool
}

// Provider is a model.Provider for any endpoint speaking the OpenAI chat
// completions API: OpenAI itself, Azure OpenAI, and compatible servers
// (Ollama, vLLM, LM Studio, ...).
type Provider struct {
	name string
	// reasoningByName sends max_completion_tokens for the models
	// reasoningModel recognizes; maxCompletionTokens always does.
	reasoningByName     bool
	maxCompletionTokens bool
	// deployment replaces the request's model (Azure's deployment name).
	deployment string
	service    oai.ChatCompletionService
}

var _ model.Provider = (*Provider)(nil)

// New returns a provider configured by opts. A provider of a credential
// checks what its kind needs (see Factory, CompatibleFactory and
// AzureFactory); the server-wide back end fails only when BaseURL is not an
// absolute http(s) URL. Both are VALIDATION errors naming the setting.
func New(opts Options) (*Provider, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	client := model.VendorClient(opts.HTTPClient, cfg.timeout)
	// The service is built from explicit options only: oai.NewClient
	// would also read OPENAI_* environment variables.
	ropts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithMaxRetries(cfg.maxRetries),
		option.WithRequestTimeout(cfg.timeout),
	}
	ropts = append(ropts, cfg.endpoint...)
	for _, h := range cfg.headers {
		ropts = append(ropts, option.WithHeader(h[0], h[1]))
	}
	return &Provider{
		name:                cfg.name,
		reasoningByName:     cfg.reasoningByName,
		maxCompletionTokens: opts.MaxCompletionTokens,
		deployment:          cfg.deployment,
		service:             oai.NewChatCompletionService(ropts...),
	}, nil
}

// Name returns the provider's name: the credential's provider name, or the
// configured Name of the server-wide back end.
func (p *Provider) Name() string { return p.name }

// Complete calls POST /chat/completions and returns the first choice: its
// text, its tool calls and why it stopped.
func (p *Provider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	res, err := p.service.New(ctx, params)
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	if len(res.Choices) == 0 {
		return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: fmt.Sprintf("Model provider %q answered without a choice.", p.name)}
	}
	msg := res.Choices[0].Message
	out := &model.Result{
		Text:  msg.Content,
		Model: res.Model,
		Usage: model.Usage{
			InputTokens:  int(res.Usage.PromptTokens),
			OutputTokens: int(res.Usage.CompletionTokens),
		},
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // a custom tool: never declared by a version
		}
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{
			ID: tc.ID, Name: tc.Function.Name, Arguments: model.Arguments(tc.Function.Arguments)})
	}
	out.FinishReason = finishReason(res.Choices[0].FinishReason, len(out.ToolCalls) > 0)
	if out.Model == "" {
		out.Model = req.Model
	}
	return out, nil
}

// Stream calls POST /chat/completions with stream and include_usage set. It
// emits the first choice's content deltas as text chunks and its tool-call
// deltas (choices[0].delta.tool_calls) as tool-call chunks, and returns the
// whole text, the whole tool calls and the usage of the final chunk. An
// error event inside the stream, like a failed response, is a
// PROVIDER_ERROR.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	params.StreamOptions.IncludeUsage = oai.Bool(true)
	stream := p.service.NewStreaming(ctx, params)
	defer stream.Close()

	out := &model.Result{Model: req.Model}
	var text strings.Builder
	var calls []*streamedCall
	send := func(c model.Chunk) error {
		if emit == nil {
			return nil
		}
		return emit(c)
	}
	finish := ""
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			out.Usage = model.Usage{
				InputTokens:  int(chunk.Usage.PromptTokens),
				OutputTokens: int(chunk.Usage.CompletionTokens),
			}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				if err := send(model.Chunk{Text: c.Delta.Content}); err != nil {
					return nil, err
				}
			}
			for _, d := range c.Delta.ToolCalls {
				i := int(d.Index)
				if i < 0 || i >= maxToolCalls {
					return nil, p.failure(ctx, fmt.Errorf("tool call index %d out of range", i))
				}
				for len(calls) <= i {
					calls = append(calls, &streamedCall{})
				}
				call := calls[i]
				if d.ID != "" {
					call.id = d.ID
				}
				call.name.WriteString(d.Function.Name)
				call.arguments.WriteString(d.Function.Arguments)
				delta := &model.ToolCallDelta{Index: i, ID: d.ID, Name: d.Function.Name, Arguments: d.Function.Arguments}
				if err := send(model.Chunk{ToolCall: delta}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failure(ctx, err)
	}
	out.Text = text.String()
	for _, c := range calls {
		if c.name.Len() == 0 && c.id == "" {
			continue // an index the server skipped
		}
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{
			ID: c.id, Name: c.name.String(), Arguments: model.Arguments(c.arguments.String())})
	}
	out.FinishReason = finishReason(finish, len(out.ToolCalls) > 0)
	return out, nil
}

// maxToolCalls bounds the index of a streamed tool call, so that a
// server's index cannot make the provider allocate without bound.
const maxToolCalls = 1024

// streamedCall is a tool call gathered from stream deltas.
type streamedCall struct {
	id        string
	name      strings.Builder
	arguments strings.Builder
}

// finishReason normalizes an OpenAI finish reason: "stop", "length",
// "tool_calls" and "content_filter" as they are, the legacy
// "function_call" as "tool_calls", any other lowercased. An answer that
// carries tool calls finishes with "tool_calls" even when the server said
// "stop", as some compatible servers do.
func finishReason(reason string, calls bool) string {
	reason = strings.ToLower(reason)
	switch {
	case reason == "function_call", calls && (reason == "stop" || reason == ""):
		return model.FinishToolCalls
	}
	return reason
}

// failure turns an error of the OpenAI client into the PROVIDER_ERROR of
// model.Failure: for an HTTP failure with the status, the vendor's error
// code (its type when it has none) and the response headers, so that a
// Retry-After is read; for an error event inside a stream with the event's
// code. The vendor's message stays in the cause, for the log only.
func (p *Provider) failure(ctx context.Context, err error) error {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.Code
		if code == "" {
			code = apiErr.Type
		}
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		return model.Failure(ctx, p.name, apiErr.StatusCode, code, header, err)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var event struct {
			Error struct {
				Code any    `json:"code"`
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &event)
		code, _ := event.Error.Code.(string)
		if code == "" {
			code = event.Error.Type
		}
		return model.Failure(ctx, p.name, 0, code, nil, err)
	}
	return model.Failure(ctx, p.name, 0, "", nil, err)
}
