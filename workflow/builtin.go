package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// ModelCaller calls a model for the llm action; model.Caller implements
// it, the same Caller that completions call through.
type ModelCaller interface {
	Target(ctx context.Context, scope model.Scope, want model.Want) (model.Target, error)
	Call(ctx context.Context, workspaceID string, req model.Request, emit func(model.Chunk) error) (*model.Result, error)
}

// Scoper returns what the runs of a canvas may use to call models: its
// project and its allowedCredentials (model.Scope). It reads no Principal:
// a step runs in the name of the run.
type Scoper func(ctx context.Context, workspaceID, canvasID string) (model.Scope, error)

var _ ModelCaller = (*model.Caller)(nil)

// BuiltinOptions wire the built-in actions.
type BuiltinOptions struct {
	// Models answers llm steps; when nil, an llm step fails with a
	// PROVIDER_ERROR when it executes (specs using llm still compile).
	Models ModelCaller
	// Scope gives the credentials an llm step may use; nil lets it use
	// every credential of the workspace.
	Scope Scoper
	// Includes resolves the includes of llm nodes' messages; when nil, a
	// run whose llm node includes a canvas fails with VALIDATION.
	Includes IncludeResolver
}

// Builtins returns a Registry holding the built-in actions: input, llm,
// template, condition, review, action and output. Embedders register their
// own actions in it too.
func Builtins(opts BuiltinOptions) *Registry {
	r := NewRegistry()
	r.Register(ActionInput, inputAction{})
	r.Register(ActionLLM, llmAction{models: opts.Models, scope: opts.Scope, includes: opts.Includes})
	r.Register(ActionTemplate, templateAction{})
	r.Register(ActionCondition, conditionAction{})
	r.Register(ActionReview, reviewAction{})
	r.Register(ActionAction, actionAction{})
	r.Register(ActionOutput, outputAction{})
	return r
}

// Ports of the built-in actions.
const (
	PortIn       = "in"
	PortOut      = "out"
	PortApproved = "approved"
	PortRejected = "rejected"
)

// flowPort returns a flow port.
func flowPort(id, dir string) Port { return Port{ID: id, Dir: dir, Type: FlowType} }

// inOutPorts are the default ports of most actions: one in, one out.
func inOutPorts(json.RawMessage) []Port {
	return []Port{flowPort(PortIn, DirIn), flowPort(PortOut, DirOut)}
}

// hasPort reports whether ports hold a port with the given id and
// direction.
func hasPort(ports []Port, id, dir string) bool {
	for _, p := range ports {
		if p.ID == id && p.Dir == dir {
			return true
		}
	}
	return false
}

// decodeConfig decodes a node's config into v; an absent or null config
// leaves v as it is. A config that does not decode is a detail at /config
// (the schema check normally catches it first).
func decodeConfig(raw json.RawMessage, v any) []canvas.Detail {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return []canvas.Detail{{Path: "/config", Message: "does not match the action's configuration: " + err.Error()}}
	}
	return nil
}

// rawSchema returns a JSON Schema text as a RawMessage.
func rawSchema(s string) json.RawMessage { return json.RawMessage(s) }

// stepError returns the error that fails a step with code and a message
// safe to show.
func stepError(code, format string, args ...any) error {
	return &canvas.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeValue decodes a JSON value keeping numbers as json.Number, so that
// they render as they were written; empty input is null.
func decodeValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
