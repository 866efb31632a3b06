package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// llmAction calls a model with messages rendered over the step's Scope.
type llmAction struct {
	models   ModelCaller
	scope    Scoper
	includes IncludeResolver
}

// llmConfig is an llm node's config: its messages and a model
// configuration with the meaning of canvas.Configuration.
type llmConfig struct {
	Model            string                   `json:"model"`
	Messages         []llmMessage             `json:"messages"`
	Temperature      *float64                 `json:"temperature"`
	MaxTokens        *int                     `json:"maxTokens"`
	TopP             *float64                 `json:"topP"`
	StructuredOutput *canvas.StructuredOutput `json:"structuredOutput"`
	Provider         string                   `json:"provider"`
	CredentialID     string                   `json:"credentialId"`
	Functions        []canvas.Function        `json:"functions"`
	ToolChoice       *canvas.ToolChoice       `json:"toolChoice"`
}

type llmMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ConfigSchema: {"model"?, "messages": [{"role", "content"}] (at least
// one), "temperature"?, "maxTokens"?, "topP"?, "structuredOutput"?,
// "provider"?, "credentialId"?, "functions"?, "toolChoice"?}: the keys of
// a version's configuration, checked as a version's are.
func (llmAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"required": ["messages"],
	"properties": {
		"model": {"type": "string"},
		"messages": {
			"type": "array",
			"minItems": 1,
			"items": {
				"type": "object",
				"required": ["role", "content"],
				"properties": {
					"role": {"enum": ["system", "user", "assistant", "function"]},
					"content": {"type": "string"}
				}
			}
		},
		"temperature": {"type": "number"},
		"provider": {"type": "string"},
		"credentialId": {"type": "string"},
		"functions": {"type": "array", "items": {"type": "object", "required": ["name"]}},
		"toolChoice": {"anyOf": [{"type": "string"}, {"type": "object", "required": ["name"]}]},
		"maxTokens": {"type": "integer", "minimum": 1},
		"topP": {"type": "number"},
		"structuredOutput": {
			"type": "object",
			"properties": {
				"enabled": {"type": "boolean"},
				"schema": {"type": "object"}
			}
		}
	}
}`)
}

// DefaultPorts: in and out.
func (llmAction) DefaultPorts(cfg json.RawMessage) []Port { return inOutPorts(cfg) }

// Compile checks the roles of the messages and compiles an enabled
// structured output schema.
func (a llmAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg llmConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	var details []canvas.Detail
	if len(cfg.Messages) == 0 {
		details = append(details, canvas.Detail{Path: "/config/messages", Message: "must hold at least one message"})
	}
	msgs := make([]canvas.Message, len(cfg.Messages))
	texts := make([]string, len(cfg.Messages))
	for i, m := range cfg.Messages {
		if !canvas.ValidMessageRole(m.Role) {
			details = append(details, canvas.Detail{Path: fmt.Sprintf("/config/messages/%d/role", i),
				Message: "must be one of system, user, assistant, function"})
		}
		msgs[i] = canvas.Message{Role: m.Role, Content: m.Content, Index: i}
		texts[i] = m.Content
	}
	tools := canvas.Configuration{StructuredOutput: cfg.StructuredOutput, Provider: cfg.Provider,
		CredentialID: cfg.CredentialID, Functions: cfg.Functions, ToolChoice: cfg.ToolChoice}
	for _, d := range canvas.ErrorDetails(tools.Check()) {
		d.Path = "/config" + strings.TrimPrefix(d.Path, "/json/configuration")
		details = append(details, d)
	}
	if details != nil {
		return nil, details
	}
	name := cfg.Model
	if name == "" {
		name = model.EchoModel
	}
	return &llmExecutor{models: a.models, scope: a.scope, includes: a.includes, cfg: cfg, model: name, messages: msgs,
		tmpl: newTemplate(texts...), hasIncludes: hasIncludes(msgs)}, nil
}

type llmExecutor struct {
	models   ModelCaller
	scope    Scoper
	includes IncludeResolver
	cfg      llmConfig
	model    string
	messages []canvas.Message
	tmpl     stepTemplate
	// hasIncludes says whether a message holds an include.
	hasIncludes bool
}

// Execute resolves the includes of the messages (IncludeResolver), renders
// them, calls the model and outputs its text, or the JSON value it answered
// when structured output is enabled. The step records the rendered
// messages and the model as its input, and the usage, the answering model
// and what the includes resolved to ("includes", as a completion run
// records them) as its metadata. When ctx ends during the call, ctx's
// error is returned as it is.
func (e *llmExecutor) Execute(ctx context.Context, in *StepInput) (*Outcome, error) {
	if e.models == nil {
		return nil, stepError(canvas.EPROVIDER, "No model back end is configured for llm steps.")
	}
	messages, tmpl, includes, err := e.resolveIncludes(ctx, in)
	if err != nil {
		return nil, err
	}
	msgs, err := tmpl.render(in, messages, fileVariables(in.Node))
	if err != nil {
		return nil, err
	}
	scope := model.Scope{WorkspaceID: in.WorkspaceID}
	if e.scope != nil && in.CanvasID != "" {
		if scope, err = e.scope(ctx, in.WorkspaceID, in.CanvasID); err != nil {
			return nil, err
		}
	}
	t, err := e.models.Target(ctx, scope, model.Want{Model: e.model, Provider: e.cfg.Provider,
		CredentialID: e.cfg.CredentialID, Path: "/config/model", CredentialPath: "/config/credentialId"})
	if err != nil {
		return nil, err
	}
	req := model.Request{Messages: msgs, Model: t.Model, Provider: t.Provider, CredentialID: t.CredentialID,
		Temperature: e.cfg.Temperature, MaxTokens: e.cfg.MaxTokens, TopP: e.cfg.TopP,
		StructuredOutput: e.cfg.StructuredOutput, Tools: e.cfg.Functions, ToolChoice: e.cfg.ToolChoice}
	res, err := e.models.Call(ctx, in.WorkspaceID, req, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	answered := res.Model
	if answered == "" {
		answered = e.model
	}
	out := &Outcome{
		Output:   res.Text,
		Input:    map[string]any{"messages": msgs, "model": e.model},
		Metadata: map[string]any{"usage": res.Usage, "model": answered, "cost": res.Cost},
	}
	if len(includes) > 0 {
		out.Metadata["includes"] = includes
	}
	if res.Target.CredentialID != "" {
		out.Metadata["credentialId"], out.Metadata["provider"] = res.Target.CredentialID, res.Target.Provider
	}
	if len(res.ToolCalls) > 0 {
		// The next step reads the calls: {"content", "toolCalls"}.
		out.Output = map[string]any{"content": res.Text, "toolCalls": res.ToolCalls}
		return out, nil
	}
	if so := e.cfg.StructuredOutput; so != nil && so.Enabled {
		text := bytes.TrimSpace([]byte(res.Text))
		if !json.Valid(text) {
			return nil, &canvas.Error{Code: canvas.EPROVIDER,
				Message: "The model's output is not valid JSON, as structured output requires."}
		}
		out.Output = json.RawMessage(text)
	}
	return out, nil
}

// fileVariables returns the file variables of the run's input node (the
// start, reached by going up from n), so that their values render as file
// references the model call resolves; nil when the start is not an input
// node or declares none.
func fileVariables(n *CNode) []canvas.Variable {
	if n == nil {
		return nil
	}
	for len(n.In) > 0 && n.In[0].From != nil {
		n = n.In[0].From
	}
	if n.ActionID != ActionInput {
		return nil
	}
	var files []canvas.Variable
	for _, v := range InputVariables(n.Node) {
		if v.Type == canvas.VariableFile {
			v.Required = false // the Service checked the run's input
			files = append(files, v)
		}
	}
	return files
}
