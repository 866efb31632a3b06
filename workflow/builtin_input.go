package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// inputAction is the start of a workflow: it declares the run's variables
// and outputs their values.
type inputAction struct{}

type inputConfig struct {
	Variables []canvas.Variable `json:"variables"`
}

// ConfigSchema: {"variables": [{name, type, required, description,
// processingOptions}]}, as a version declares its variables.
func (inputAction) ConfigSchema() json.RawMessage {
	types, _ := json.Marshal(canvas.VariableTypes)
	return rawSchema(`{
	"type": "object",
	"properties": {
		"variables": {
			"type": "array",
			"items": {
				"type": "object",
				"required": ["name"],
				"properties": {
					"name": {"type": "string", "minLength": 1, "pattern": "^[^\\s{}]+$"},
					"type": {"enum": ` + string(types) + `},
					"required": {"type": "boolean"},
					"description": {"type": "string"},
					"processingOptions": {
						"type": "object",
						"properties": {"allowMultimodal": {"type": "boolean"}}
					}
				}
			}
		}
	}
}`)
}

// DefaultPorts: one out port; the input node has no predecessors.
func (inputAction) DefaultPorts(json.RawMessage) []Port {
	return []Port{flowPort(PortOut, DirOut)}
}

// Compile checks that the variable names are unique.
func (inputAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg inputConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	var details []canvas.Detail
	seen := make(map[string]bool, len(cfg.Variables))
	for i, v := range cfg.Variables {
		path := fmt.Sprintf("/config/variables/%d/name", i)
		switch {
		case strings.TrimSpace(v.Name) == "":
			details = append(details, canvas.Detail{Path: path, Message: "must not be empty"})
		case seen[v.Name]:
			details = append(details, canvas.Detail{Path: path, Message: "duplicates the name of another variable"})
		}
		seen[v.Name] = true
	}
	if details != nil {
		return nil, details
	}
	return inputExecutor{}, nil
}

type inputExecutor struct{}

// Execute outputs the run's variables as an object.
func (inputExecutor) Execute(_ context.Context, in *StepInput) (*Outcome, error) {
	vars := in.Variables
	if vars == nil {
		vars = map[string]any{}
	}
	return &Outcome{Output: vars}, nil
}

// InputVariables returns the variables an input node declares, an empty
// type read as text; the Service checks a run's input against them. A node
// whose config does not decode declares none.
func InputVariables(n Node) []canvas.Variable {
	var cfg inputConfig
	if decodeConfig(n.Config, &cfg) != nil {
		return nil
	}
	for i := range cfg.Variables {
		if cfg.Variables[i].Type == "" {
			cfg.Variables[i].Type = canvas.VariableText
		}
	}
	return cfg.Variables
}
