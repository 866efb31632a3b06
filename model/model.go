package model

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Message is one rendered message sent to a model: a role (one of the
// canvas.Role* values) and its final text.
//
// A message rendered from file variables carries their addresses in
// FileRefs, each naming the span of Content that stands for the file; it is
// in this form that runs are stored (addresses, never bytes). Resolving the
// files (FileResolver.Resolve) replaces each span with the file's marker
// "[file name=<name> type=<mime> size=<n>]", followed on the next line by
// the content of a text file, clears FileRefs, and leaves in Files the parts
// that are not text: images and other files, in order. Providers send Files
// in the form their back end understands.
//
// An assistant message may carry the tool calls the model made
// (ToolCalls), and a message of RoleTool answers the call ToolCallID with
// its Content: that is how a client runs a tool loop.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	FileRefs   []FileRef  `json:"fileRefs,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Files      []File     `json:"-"`
}

// Request is what a Provider answers, and what a run stores to execute it
// later (its JSON form). Model names the model; nil settings are left to
// the back end's defaults. StructuredOutput is honoured only when it is
// enabled and carries a schema. Tools are the functions the model may call
// and ToolChoice whether it may, must or must not (nil: the back end's
// default, auto).
//
// Target says who serves the model: a workspace credential
// (Target.CredentialID), or, when it names none, the provider the Registry
// resolves for Model. Fallbacks are tried in order when the target fails
// with a retryable error.
type Request struct {
	Messages         []Message                `json:"messages"`
	Model            string                   `json:"model"`
	Temperature      *float64                 `json:"temperature,omitempty"`
	MaxTokens        *int                     `json:"maxTokens,omitempty"`
	TopP             *float64                 `json:"topP,omitempty"`
	StructuredOutput *canvas.StructuredOutput `json:"structuredOutput,omitempty"`
	Tools            []canvas.Function        `json:"tools,omitempty"`
	ToolChoice       *canvas.ToolChoice       `json:"toolChoice,omitempty"`
	Provider         string                   `json:"provider,omitempty"`
	CredentialID     string                   `json:"credentialId,omitempty"`
	Fallbacks        []Target                 `json:"fallbacks,omitempty"`
}

// Target is a model and who serves it: a workspace credential and its
// provider, or (CredentialID empty) the provider the Registry resolves for
// Model.
type Target struct {
	Model        string `json:"model"`
	Provider     string `json:"provider,omitempty"`
	CredentialID string `json:"credentialId,omitempty"`
}

// Structured reports whether r asks for output matching a JSON Schema.
func (r *Request) Structured() bool {
	so := r.StructuredOutput
	return so != nil && so.Enabled && len(so.Schema) > 0
}

// Chunk is one piece of streamed model output: text, or a piece of a tool
// call.
type Chunk struct {
	Text     string         `json:"text"`
	ToolCall *ToolCallDelta `json:"toolCall,omitempty"`
}

// Usage counts the tokens a completion consumed.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Result is a finished completion: the whole text, the tool calls, the
// token usage, the model that answered (as the back end names it) and why
// it stopped ("stop", "length", "tool_calls", ...).
//
// The Caller sets Target to what answered (the request's, or the fallback
// that did) and Cost to what the call cost, nil when no price is known.
type Result struct {
	Text         string     `json:"text"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
	Usage        Usage      `json:"usage"`
	Model        string     `json:"model"`
	FinishReason string     `json:"finishReason"`
	Target       Target     `json:"target"`
	Cost         *Cost      `json:"cost,omitempty"`
}

// Provider is a model back end.
//
// Complete returns the whole answer at once. Stream calls emit with each
// piece of output as it arrives and returns the same Result Complete would;
// when emit returns an error Stream stops and returns that error. Both stop
// promptly when ctx is done. Back-end failures are *canvas.Error with code
// canvas.EPROVIDER whose cause (Unwrap) is the underlying error, so that
// errors.Is(err, context.DeadlineExceeded) still works.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (*Result, error)
	Stream(ctx context.Context, req Request, emit func(Chunk) error) (*Result, error)
}

// Registry maps model names to providers. A model resolves to the provider
// registered for exactly its name, else to the provider of the longest
// registered prefix; the empty prefix therefore acts as the fallback. A
// Registry is safe for concurrent use, and the zero value is ready to use.
type Registry struct {
	mu       sync.RWMutex
	exact    map[string]Provider
	prefixes []prefixProvider // sorted by prefix length, longest first
}

type prefixProvider struct {
	prefix   string
	provider Provider
}

// NewRegistry returns a registry holding the given providers under their
// own names (Provider.Name), for example the echo provider as "echo".
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{}
	for _, p := range providers {
		r.Register(p.Name(), p)
	}
	return r
}

// Register makes model resolve to p, replacing any earlier registration of
// the same model.
func (r *Registry) Register(model string, p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exact == nil {
		r.exact = make(map[string]Provider)
	}
	r.exact[model] = p
}

// RegisterPrefix makes every model starting with prefix resolve to p unless
// an exact registration or a longer prefix matches first. RegisterPrefix("",
// p) makes p the fallback for every model.
func (r *Registry) RegisterPrefix(prefix string, p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.prefixes {
		if r.prefixes[i].prefix == prefix {
			r.prefixes[i].provider = p
			return
		}
	}
	r.prefixes = append(r.prefixes, prefixProvider{prefix: prefix, provider: p})
	sort.SliceStable(r.prefixes, func(i, j int) bool {
		return len(r.prefixes[i].prefix) > len(r.prefixes[j].prefix)
	})
}

// Resolve returns the provider for model, or a VALIDATION error naming the
// model when no registration matches it.
func (r *Registry) Resolve(model string) (Provider, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if p, ok := r.exact[model]; ok {
		return p, nil
	}
	for _, pp := range r.prefixes {
		if strings.HasPrefix(model, pp.prefix) {
			return pp.provider, nil
		}
	}
	return nil, canvas.Errorf(canvas.EINVALID, "No model provider serves model %q.", model)
}

// WithUserMessages returns rendered followed by one user message per extra
// content: how a completion request's own messages join the version's. The
// extra contents are not rendered; they reach the model as written.
func WithUserMessages(rendered []Message, contents ...string) []Message {
	out := make([]Message, 0, len(rendered)+len(contents))
	out = append(out, rendered...)
	for _, c := range contents {
		out = append(out, Message{Role: canvas.RoleUser, Content: c})
	}
	return out
}
