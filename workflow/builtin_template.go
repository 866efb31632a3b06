package workflow

import (
	"context"
	"encoding/json"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// templateAction renders a text over the step's Scope.
type templateAction struct{}

type templateConfig struct {
	Template *string `json:"template"`
}

// ConfigSchema: {"template": string}, required.
func (templateAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"required": ["template"],
	"properties": {"template": {"type": "string"}}
}`)
}

// DefaultPorts: in and out.
func (templateAction) DefaultPorts(cfg json.RawMessage) []Port { return inOutPorts(cfg) }

// Compile prepares the template.
func (templateAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg templateConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	if cfg.Template == nil {
		return nil, []canvas.Detail{{Path: "/config/template", Message: "is required"}}
	}
	return &textExecutor{text: *cfg.Template, tmpl: newTemplate(*cfg.Template)}, nil
}

// textExecutor outputs its text rendered over the step's Scope.
type textExecutor struct {
	text string
	tmpl stepTemplate
}

// Execute outputs the rendered text.
func (e *textExecutor) Execute(_ context.Context, in *StepInput) (*Outcome, error) {
	s, err := e.tmpl.renderString(in, e.text)
	if err != nil {
		return nil, err
	}
	return &Outcome{Output: s}, nil
}

// outputAction is a leaf whose output is the run's result: its rendered
// value, or what its predecessor output.
type outputAction struct{}

type outputConfig struct {
	Value *string `json:"value"`
}

// ConfigSchema: {"value"?: string}, a template.
func (outputAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"properties": {"value": {"type": "string"}}
}`)
}

// DefaultPorts: one in port; an output node is a leaf.
func (outputAction) DefaultPorts(json.RawMessage) []Port {
	return []Port{flowPort(PortIn, DirIn)}
}

// Compile prepares the value's template.
func (outputAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg outputConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	if cfg.Value != nil {
		return &textExecutor{text: *cfg.Value, tmpl: newTemplate(*cfg.Value)}, nil
	}
	return outputExecutor{}, nil
}

// outputExecutor passes on the output of the node's first completed
// predecessor.
type outputExecutor struct{}

// Execute outputs the output of the first predecessor (in the order of the
// node's incoming edges) whose step completed, or null when none did.
func (outputExecutor) Execute(_ context.Context, in *StepInput) (*Outcome, error) {
	for _, l := range in.Node.In {
		if l.From == nil {
			continue
		}
		if s, ok := in.Steps[l.From.ID]; ok && s.Status == StepCompleted {
			out := append(json.RawMessage(nil), s.Output...)
			if len(out) == 0 {
				out = json.RawMessage("null")
			}
			return &Outcome{Output: out}, nil
		}
	}
	return &Outcome{Output: nil}, nil
}
