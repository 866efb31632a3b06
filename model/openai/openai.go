package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// OpenAI defaults.
const (
	DefaultBaseURL = "https://api.oai.com/v1"
	DefaultTimeout = 5 * time.Minute
)

// Options configure an OpenAI-compatible provider. Everything is
// explicit: the provider never reads OPENAI_* environment variables.
type Options struct {
	// Name is the provider's name (Provider.Name); default "openai".
	Name string
	// BaseURL is the API root, for example "http://localhost:11434/v1" for
	// Ollama; default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// HTTPClient makes the requests; default a client of its own whose
	// transport bounds the wait for response headers by Timeout.
	HTTPClient *http.Client
	// Timeout bounds each attempt, streamed body included; default
	// DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a failed request (connection error, 408,
	// 409, 429, 5xx) is retried; zero means never.
	MaxRetries int
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// (what OpenAI's reasoning models require) instead of max_tokens (what
	// every OpenAI-compatible server accepts).
	MaxCompletionTokens bool
}

// Provider is a model.Provider for any endpoint speaking the OpenAI chat
// completions API (OpenAI itself, Ollama, vLLM, LM Studio, ...).
type Provider struct {
	opts    Options
	service oai.ChatCompletionService
}

var _ model.Provider = (*Provider)(nil)

// New returns an OpenAI-compatible provider. It fails only when BaseURL is
// not an absolute http(s) URL.
func New(opts Options) (*Provider, error) {
	if opts.Name == "" {
		opts.Name = "openai"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if !strings.HasPrefix(opts.BaseURL, "http://") && !strings.HasPrefix(opts.BaseURL, "https://") {
		return nil, canvas.Errorf(canvas.EINVALID, "OpenAI base URL %q is not an http(s) URL.", opts.BaseURL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
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
	// The service is built from explicit options only: oai.NewClient
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
	return &Provider{opts: opts, service: oai.NewChatCompletionService(ropts...)}, nil
}

// Name returns the provider's configured name.
func (p *Provider) Name() string { return p.opts.Name }

// Complete calls POST /chat/completions and returns the first choice.
func (p *Provider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	res, err := p.service.New(ctx, params)
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	out := &model.Result{
		Model: res.Model,
		Usage: model.Usage{
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
				out.FinishReason = c.FinishReason
			}
			if c.Delta.Content == "" {
				continue
			}
			text.WriteString(c.Delta.Content)
			if emit != nil {
				if err := emit(model.Chunk{Text: c.Delta.Content}); err != nil {
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
func (p *Provider) params(req model.Request) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{
		Model:    shared.ChatModel(req.Model),
		Messages: make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)),
	}
	for _, m := range req.Messages {
		switch m.Role {
		case canvas.RoleSystem:
			params.Messages = append(params.Messages, oai.SystemMessage(m.Content))
		case canvas.RoleAssistant:
			params.Messages = append(params.Messages, oai.AssistantMessage(m.Content))
		case canvas.RoleFunction:
			params.Messages = append(params.Messages, oai.ChatCompletionMessageParamUnion{
				OfFunction: &oai.ChatCompletionFunctionMessageParam{Content: oai.String(m.Content), Name: "function"},
			})
		default:
			if len(m.Files) > 0 {
				parts := append([]oai.ChatCompletionContentPartUnionParam{oai.TextContentPart(m.Content)}, fileParts(m.Files)...)
				params.Messages = append(params.Messages, oai.UserMessage(parts))
				continue
			}
			params.Messages = append(params.Messages, oai.UserMessage(m.Content))
		}
		if len(m.Files) > 0 {
			// Only user messages carry parts other than text: the files of
			// any other message follow it in a user message of their own.
			params.Messages = append(params.Messages, oai.UserMessage(fileParts(m.Files)))
		}
	}
	if req.Temperature != nil {
		params.Temperature = oai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = oai.Float(*req.TopP)
	}
	if req.MaxTokens != nil {
		if p.opts.MaxCompletionTokens {
			params.MaxCompletionTokens = oai.Int(int64(*req.MaxTokens))
		} else {
			params.MaxTokens = oai.Int(int64(*req.MaxTokens))
		}
	}
	if req.Structured() {
		if err := model.ValidateSchema(req.StructuredOutput.Schema); err != nil {
			return params, err
		}
		params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{
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
func (p *Provider) failure(ctx context.Context, err error) error {
	e := &canvas.Error{Code: canvas.EPROVIDER, Err: err}
	var apiErr *oai.Error
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
func fileParts(files []model.File) []oai.ChatCompletionContentPartUnionParam {
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(files))
	for _, f := range files {
		data := "data:" + f.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(f.Data)
		if f.Image {
			parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: data}))
			continue
		}
		parts = append(parts, oai.FileContentPart(oai.ChatCompletionContentPartFileFileParam{
			Filename: oai.String(f.Name), FileData: oai.String(data)}))
	}
	return parts
}
