package model

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// OpenAI defaults.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultOpenAITimeout = 5 * time.Minute
)

// OpenAIOptions configure an OpenAI-compatible provider. Everything is
// explicit: the provider never reads OPENAI_* environment variables.
type OpenAIOptions struct {
	// Name is the provider's name (Provider.Name); default "openai".
	Name string
	// BaseURL is the API root, for example "http://localhost:11434/v1" for
	// Ollama; default DefaultOpenAIBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// HTTPClient makes the requests; default a client of its own whose
	// transport bounds the wait for response headers by Timeout.
	HTTPClient *http.Client
	// Timeout bounds each attempt, streamed body included; default
	// DefaultOpenAITimeout.
	Timeout time.Duration
	// MaxRetries is how many times a failed request (connection error, 408,
	// 409, 429, 5xx) is retried; zero means never.
	MaxRetries int
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// (what OpenAI's reasoning models require) instead of max_tokens (what
	// every OpenAI-compatible server accepts).
	MaxCompletionTokens bool
}

// OpenAI is a provider for any endpoint speaking the OpenAI chat completions
// API (OpenAI itself, Ollama, vLLM, LM Studio, ...).
type OpenAI struct {
	opts    OpenAIOptions
	service openai.ChatCompletionService
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns an OpenAI-compatible provider. It fails only when
// BaseURL is not an absolute http(s) URL.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	if opts.Name == "" {
		opts.Name = "openai"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultOpenAIBaseURL
	}
	if !strings.HasPrefix(opts.BaseURL, "http://") && !strings.HasPrefix(opts.BaseURL, "https://") {
		return nil, canvas.Errorf(canvas.EINVALID, "OpenAI base URL %q is not an http(s) URL.", opts.BaseURL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultOpenAITimeout
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			t = t.Clone()
			t.ResponseHeaderTimeout = opts.Timeout
			client.Transport = t
		}
	}
	// The service is built from explicit options only: openai.NewClient
	// would also read OPENAI_* environment variables.
	ropts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(opts.BaseURL),
		option.WithMaxRetries(opts.MaxRetries),
		option.WithRequestTimeout(opts.Timeout),
	}
	if opts.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(opts.APIKey))
	}
	return &OpenAI{opts: opts, service: openai.NewChatCompletionService(ropts...)}, nil
}

// Name returns the provider's configured name.
func (p *OpenAI) Name() string { return p.opts.Name }

// Complete calls POST /chat/completions and returns the first choice.
func (p *OpenAI) Complete(ctx context.Context, req Request) (*Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	res, err := p.service.New(ctx, params)
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	out := &Result{
		Model: res.Model,
		Usage: Usage{
			InputTokens:  int(res.Usage.PromptTokens),
			OutputTokens: int(res.Usage.CompletionTokens),
		},
	}
	if len(res.Choices) == 0 {
		return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: fmt.Sprintf("Model provider %q answered without a choice.", p.opts.Name)}
	}
	out.Text = res.Choices[0].Message.Content
	out.FinishReason = res.Choices[0].FinishReason
	if out.Model == "" {
		out.Model = req.Model
	}
	return out, nil
}

// Stream calls POST /chat/completions with stream and include_usage set,
// emits the first choice's content deltas, and returns the whole text with
// the usage of the final chunk. An error event inside the stream, like a
// failed response, is a PROVIDER_ERROR.
func (p *OpenAI) Stream(ctx context.Context, req Request, emit func(Chunk) error) (*Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	stream := p.service.NewStreaming(ctx, params)
	defer stream.Close()

	out := &Result{Model: req.Model}
	var text strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			out.Usage = Usage{
				InputTokens:  int(chunk.Usage.PromptTokens),
				OutputTokens: int(chunk.Usage.CompletionTokens),
			}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.FinishReason != "" {
				out.FinishReason = c.FinishReason
			}
			if c.Delta.Content == "" {
				continue
			}
			text.WriteString(c.Delta.Content)
			if emit != nil {
				if err := emit(Chunk{Text: c.Delta.Content}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failure(ctx, err)
	}
	out.Text = text.String()
	return out, nil
}

// params builds the chat completion parameters of req. Roles map one to one;
// a function message is sent with the name "function", since versions do not
// record one, and an unknown role is sent as user. A user message with Files
// is sent as a text part followed by one part per file (see fileParts); the
// files of a system, assistant or function message, whose content OpenAI
// takes as text only, are sent in an extra user message right after it. The structured output
// schema is checked first, so that an invalid one never reaches the back end.
func (p *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(req.Model),
		Messages: make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)),
	}
	for _, m := range req.Messages {
		switch m.Role {
		case canvas.RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case canvas.RoleAssistant:
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		case canvas.RoleFunction:
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{
				OfFunction: &openai.ChatCompletionFunctionMessageParam{Content: openai.String(m.Content), Name: "function"},
			})
		default:
			if len(m.Files) > 0 {
				parts := append([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}, fileParts(m.Files)...)
				params.Messages = append(params.Messages, openai.UserMessage(parts))
				continue
			}
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
		if len(m.Files) > 0 {
			// Only user messages carry parts other than text: the files of
			// any other message follow it in a user message of their own.
			params.Messages = append(params.Messages, openai.UserMessage(fileParts(m.Files)))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = openai.Float(*req.TopP)
	}
	if req.MaxTokens != nil {
		if p.opts.MaxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(*req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(*req.MaxTokens))
		}
	}
	if req.Structured() {
		if err := ValidateSchema(req.StructuredOutput.Schema); err != nil {
			return params, err
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "output",
					Schema: json.RawMessage(req.StructuredOutput.Schema),
				},
			},
		}
	}
	return params, nil
}

// failure turns an error of the OpenAI client into a PROVIDER_ERROR that
// names the provider and, for an HTTP failure, the upstream status and error
// code. The upstream message stays in the cause, for the log only: it can
// echo credentials or internals of the back end.
func (p *OpenAI) failure(ctx context.Context, err error) error {
	e := &canvas.Error{Code: canvas.EPROVIDER, Err: err}
	var apiErr *openai.Error
	switch {
	case errors.As(err, &apiErr):
		what := apiErr.Code
		if what == "" {
			what = apiErr.Type
		}
		if what != "" {
			what = " (" + what + ")"
		}
		e.Message = fmt.Sprintf("Model provider %q answered HTTP %d%s.", p.opts.Name, apiErr.StatusCode, what)
	case ctx.Err() != nil:
		e.Message = fmt.Sprintf("Model provider %q did not answer in time: %v.", p.opts.Name, ctx.Err())
		e.Err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	case errors.Is(err, context.DeadlineExceeded):
		e.Message = fmt.Sprintf("Model provider %q did not answer within %s.", p.opts.Name, p.opts.Timeout)
	default:
		e.Message = fmt.Sprintf("Model provider %q failed.", p.opts.Name)
	}
	return e
}

// fileParts returns the content parts of files: an image_url part with a
// base64 data: URL for an image, a file part {filename, file_data} with a
// base64 data: URL for any other file.
func fileParts(files []File) []openai.ChatCompletionContentPartUnionParam {
	parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(files))
	for _, f := range files {
		data := "data:" + f.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(f.Data)
		if f.Image {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: data}))
			continue
		}
		parts = append(parts, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
			Filename: openai.String(f.Name), FileData: openai.String(data)}))
	}
	return parts
}
