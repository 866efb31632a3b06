package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// conditionAction chooses one out port: the port of its first branch whose
// expression (github.com/expr-lang/expr) is true, else its default port.
type conditionAction struct{}

type conditionConfig struct {
	Branches []conditionBranch `json:"branches"`
	Default  string            `json:"default"`
}

type conditionBranch struct {
	Port string `json:"port"`
	When string `json:"when"`
}

// ConfigSchema: {"branches": [{"port", "when"}] (at least one),
// "default"?: port}.
func (conditionAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"required": ["branches"],
	"properties": {
		"branches": {
			"type": "array",
			"minItems": 1,
			"items": {
				"type": "object",
				"required": ["port", "when"],
				"properties": {
					"port": {"type": "string", "minLength": 1},
					"when": {"type": "string", "minLength": 1}
				}
			}
		},
		"default": {"type": "string", "minLength": 1}
	}
}`)
}

// DefaultPorts: in, and one out port per distinct branch port and the
// default, in the order they first appear.
func (conditionAction) DefaultPorts(raw json.RawMessage) []Port {
	var cfg conditionConfig
	decodeConfig(raw, &cfg)
	ports := []Port{flowPort(PortIn, DirIn)}
	add := func(id string) {
		if id != "" && !hasPort(ports, id, DirOut) {
			ports = append(ports, flowPort(id, DirOut))
		}
	}
	for _, b := range cfg.Branches {
		add(b.Port)
	}
	add(cfg.Default)
	return ports
}

// conditionCompileEnv types the names an expression reads: input (the
// run's variables), steps (id -> {output, status}); any other name is a
// variable, read at top level.
var conditionCompileEnv = map[string]any{"input": map[string]any{}, "steps": map[string]any{}}

// Compile compiles each branch's expression once, as a bool expression,
// and checks, when the node lists its ports, that every branch port and
// the default are out ports of it.
func (a conditionAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg conditionConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	var details []canvas.Detail
	if len(cfg.Branches) == 0 {
		details = append(details, canvas.Detail{Path: "/config/branches", Message: "must hold at least one branch"})
	}
	e := &conditionExecutor{def: cfg.Default}
	for i, b := range cfg.Branches {
		p, err := expr.Compile(b.When, expr.Env(conditionCompileEnv), expr.AllowUndefinedVariables(), expr.AsBool())
		if err != nil {
			details = append(details, canvas.Detail{Path: fmt.Sprintf("/config/branches/%d/when", i), Message: exprMessage(err)})
		}
		e.branches = append(e.branches, compiledBranch{port: b.Port, program: p})
	}
	if len(n.Ports) > 0 {
		for i, b := range cfg.Branches {
			if !hasPort(n.Ports, b.Port, DirOut) {
				details = append(details, canvas.Detail{Path: fmt.Sprintf("/config/branches/%d/port", i),
					Message: fmt.Sprintf("%q is not an out port of the node", b.Port)})
			}
		}
		if cfg.Default != "" && !hasPort(n.Ports, cfg.Default, DirOut) {
			details = append(details, canvas.Detail{Path: "/config/default",
				Message: fmt.Sprintf("%q is not an out port of the node", cfg.Default)})
		}
	}
	if details != nil {
		return nil, details
	}
	return e, nil
}

type compiledBranch struct {
	port    string
	program *vm.Program
}

type conditionExecutor struct {
	branches []compiledBranch
	def      string
}

// Execute evaluates the branches in order and goes on through the port of
// the first true one, else through the default port; with neither the
// step fails (VALIDATION), as it does when an expression fails to
// evaluate. The output is {"port": <the chosen port>}.
func (e *conditionExecutor) Execute(_ context.Context, in *StepInput) (*Outcome, error) {
	env := conditionEnv(in)
	port := ""
	for i, b := range e.branches {
		v, err := expr.Run(b.program, env)
		if err != nil {
			return nil, stepError(canvas.EINVALID, "The expression of branch %d (port %q) failed: %s", i, b.port, exprMessage(err))
		}
		if ok, _ := v.(bool); ok {
			port = b.port
			break
		}
	}
	if port == "" {
		port = e.def
	}
	if port == "" {
		return nil, stepError(canvas.EINVALID, "No branch matched, and the condition has no default port.")
	}
	return &Outcome{Output: map[string]any{"port": port}, Ports: []string{port}}, nil
}

// conditionEnv is what the expressions of a step read: input (the run's
// variables), steps (id -> {"output", "status"} for each ended step), and
// each variable at top level unless it is named input or steps. Numbers
// are float64s, as expr compares them.
func conditionEnv(in *StepInput) map[string]any {
	vars, _ := exprValue(in.Variables).(map[string]any)
	if vars == nil {
		vars = map[string]any{}
	}
	steps := make(map[string]any, len(in.Steps))
	for id, s := range in.Steps {
		var out any
		if len(s.Output) > 0 {
			_ = json.Unmarshal(s.Output, &out)
		}
		steps[id] = map[string]any{"output": out, "status": s.Status}
	}
	env := make(map[string]any, len(vars)+2)
	for k, v := range vars {
		env[k] = v
	}
	env["input"], env["steps"] = vars, steps
	return env
}

// exprValue returns v with every json.Number turned into a float64 (kept
// as text when it is not a number), copying the maps and slices that hold
// one.
func exprValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = exprValue(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = exprValue(x)
		}
		return s
	}
	return v
}

// exprMessage is the first line of an expr error: the problem and its
// position, without the source excerpt.
func exprMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
