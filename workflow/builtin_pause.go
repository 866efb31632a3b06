package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// reviewAction pauses the run in waiting-for-review until a reviewer
// approves (the flow goes on through "approved") or rejects it (through
// "rejected" when that port leads somewhere, else the run fails).
type reviewAction struct{}

type reviewConfig struct {
	Instructions string `json:"instructions"`
}

// ConfigSchema: {"instructions"?: string}.
func (reviewAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"properties": {"instructions": {"type": "string"}}
}`)
}

// DefaultPorts: in, and the out ports approved and rejected.
func (reviewAction) DefaultPorts(json.RawMessage) []Port {
	return []Port{flowPort(PortIn, DirIn), flowPort(PortApproved, DirOut), flowPort(PortRejected, DirOut)}
}

// Compile checks that a node listing its ports has an approved out port,
// the one an approval goes on through.
func (reviewAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg reviewConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	if len(n.Ports) > 0 && !hasPort(n.Ports, PortApproved, DirOut) {
		return nil, []canvas.Detail{{Path: "/ports", Message: `a review node needs the out port "approved"`}}
	}
	return reviewExecutor{}, nil
}

type reviewExecutor struct{}

var _ Resumer = reviewExecutor{}

// Execute pauses the step in waiting-for-review.
func (reviewExecutor) Execute(context.Context, *StepInput) (*Outcome, error) {
	return &Outcome{Pause: StepWaitingForReview}, nil
}

// Resume reads {"approved": bool, "comment"?: string}. An approval goes on
// through "approved"; a rejection through "rejected" when the node has an
// edge leaving that port, else it fails the step with canvas.EREJECTED. The
// output is {"approved", "comment"}, and the comment is recorded in the
// metadata.
func (reviewExecutor) Resume(_ context.Context, in *StepInput, payload json.RawMessage) (*Outcome, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil || fields == nil {
		return nil, canvas.Invalid("The review must be an object {approved, comment}.",
			canvas.Detail{Path: "/json/approved", Message: "is required"})
	}
	var approved bool
	if raw, ok := fields["approved"]; !ok || isJSONNull(raw) {
		return nil, canvas.Invalid("The review must say whether it approves.",
			canvas.Detail{Path: "/json/approved", Message: "is required"})
	} else if json.Unmarshal(raw, &approved) != nil {
		return nil, canvas.Invalid("The review must say whether it approves.",
			canvas.Detail{Path: "/json/approved", Message: "must be a boolean"})
	}
	var comment string
	if raw, ok := fields["comment"]; ok && !isJSONNull(raw) && json.Unmarshal(raw, &comment) != nil {
		return nil, canvas.Invalid("The review's comment must be a string.",
			canvas.Detail{Path: "/json/comment", Message: "must be a string"})
	}
	out := &Outcome{
		Output:   map[string]any{"approved": approved, "comment": comment},
		Metadata: map[string]any{"comment": comment},
		Ports:    []string{PortApproved},
	}
	if approved {
		return out, nil
	}
	for _, l := range in.Node.Out {
		if l.FromPort == PortRejected {
			out.Ports = []string{PortRejected}
			return out, nil
		}
	}
	if comment == "" {
		return nil, stepError(canvas.EREJECTED, "The review rejected the run.")
	}
	return nil, stepError(canvas.EREJECTED, "The review rejected the run: %s", comment)
}

// actionAction pauses the run in requires-action until its input is given
// (Service.Resume), which becomes the step's output.
type actionAction struct{}

type actionConfig struct {
	Instructions string          `json:"instructions"`
	InputSchema  json.RawMessage `json:"inputSchema"`
}

// inputSchemaPath is where an action node's input schema is in its node.
const inputSchemaPath = "/config/inputSchema"

// ConfigSchema: {"instructions"?: string, "inputSchema"?: a JSON Schema
// object}.
func (actionAction) ConfigSchema() json.RawMessage {
	return rawSchema(`{
	"type": "object",
	"properties": {
		"instructions": {"type": "string"},
		"inputSchema": {"type": "object"}
	}
}`)
}

// DefaultPorts: in and out.
func (actionAction) DefaultPorts(cfg json.RawMessage) []Port { return inOutPorts(cfg) }

// Compile compiles the input schema, when there is one.
func (actionAction) Compile(n Node) (Executor, []canvas.Detail) {
	var cfg actionConfig
	if d := decodeConfig(n.Config, &cfg); d != nil {
		return nil, d
	}
	e := actionExecutor{}
	if len(cfg.InputSchema) > 0 && !isJSONNull(cfg.InputSchema) {
		s, err := canvas.CompileSchema(inputSchemaPath, cfg.InputSchema)
		if err != nil {
			return nil, canvas.ErrorDetails(err)
		}
		e.schema = s
	}
	return e, nil
}

type actionExecutor struct {
	// schema, when set, is what the input must match.
	schema *jsonschema.Schema
}

var _ Resumer = actionExecutor{}

// Execute pauses the step in requires-action.
func (actionExecutor) Execute(context.Context, *StepInput) (*Outcome, error) {
	return &Outcome{Pause: StepRequiresAction}, nil
}

// Resume reads {"input": any} and outputs the input (an absent input is
// null). Input that does not match the node's input schema is VALIDATION
// with a detail per problem under /json/input, sorted by path.
func (e actionExecutor) Resume(_ context.Context, _ *StepInput, payload json.RawMessage) (*Outcome, error) {
	var body struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		return nil, canvas.Invalid("The resume body must be an object {input}.",
			canvas.Detail{Path: "/json", Message: "must be an object"})
	}
	input := bytes.TrimSpace(body.Input)
	if len(input) == 0 {
		input = []byte("null")
	}
	if e.schema != nil {
		v, err := decodeValue(input)
		if err != nil {
			return nil, canvas.Invalid("The input is not valid JSON.", canvas.Detail{Path: "/json/input", Message: "must be valid JSON"})
		}
		if err := e.schema.Validate(v); err != nil {
			details := []canvas.Detail{{Path: "/json/input", Message: err.Error()}}
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				details = canvas.SchemaErrorDetails("/json/input", ve)
				sort.SliceStable(details, func(i, j int) bool { return details[i].Path < details[j].Path })
			}
			return nil, canvas.Invalid("The input does not match the action's input schema.", details...)
		}
	}
	return &Outcome{Output: json.RawMessage(append([]byte(nil), input...))}, nil
}

// isJSONNull reports whether raw is the JSON null.
func isJSONNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
