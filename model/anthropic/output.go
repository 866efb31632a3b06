package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/promptcanvas/promptcanvas/model"
)

// OutputTool is the name of the tool through which a model gives
// structured output. The Messages API's own JSON output format
// (output_config.format) is served by the newest models only and refuses
// parts of JSON Schema; a forced tool works on every Claude model with the
// schemas the project accepts. A version's function may not take this
// name when it asks for structured output.
const OutputTool = "output"

// outputTool is how the structured output of one request travels: as the
// input of the tool OutputTool, whose input_schema is the schema. The API
// takes only object schemas as tool input: any other schema is wrapped as
// the property "value" of an object (its $defs, definitions, $id and
// $schema moved to the wrapper, so that references through them still
// resolve), and the answer is unwrapped.
type outputTool struct {
	enabled bool
	wrapped bool
}

// tool returns the tool of schema, or the VALIDATION error of a schema
// the project does not accept.
func (o *outputTool) tool(schema json.RawMessage) (*sdk.ToolParam, error) {
	if err := model.ValidateSchema(schema); err != nil {
		return nil, err
	}
	var keywords map[string]json.RawMessage
	if err := json.Unmarshal(schema, &keywords); err != nil {
		return nil, err // ValidateSchema accepts only JSON objects
	}
	o.enabled = true
	t := &sdk.ToolParam{Name: OutputTool, Description: sdk.String("Give the answer as this tool's input.")}
	typ, typed := keywords["type"]
	_, properties := keywords["properties"]
	if typed && string(bytes.TrimSpace(typ)) == `"object"` || !typed && properties {
		s, err := inputSchema(schema)
		if err != nil {
			return nil, err
		}
		t.InputSchema = s
		return t, nil
	}
	o.wrapped = true
	extra := map[string]any{"required": []string{"value"}}
	for _, k := range []string{"$defs", "definitions", "$id", "$schema"} {
		if v, ok := keywords[k]; ok {
			extra[k] = v
			delete(keywords, k)
		}
	}
	t.InputSchema = sdk.ToolInputSchemaParam{Properties: map[string]any{"value": keywords}, ExtraFields: extra}
	return t, nil
}

// isOutput reports whether a tool_use block named name is the structured
// output.
func (o *outputTool) isOutput(name string) bool {
	return o.enabled && name == OutputTool
}

// text returns the structured output given as the tool's input.
func (o *outputTool) text(input json.RawMessage) string {
	if !o.wrapped {
		return string(bytes.TrimSpace(input))
	}
	var wrapper struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(input, &wrapper) != nil {
		return ""
	}
	return string(wrapper.Value)
}

// result returns the Result of an answer: its text (the structured output
// when the model gave it), its tool calls, its usage (input tokens with
// those written to and read from the prompt cache) and its normalized
// finish reason.
func (o *outputTool) result(msg *sdk.Message, requested string) *model.Result {
	u := msg.Usage
	res := &model.Result{
		Model: string(msg.Model),
		Usage: model.Usage{
			InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens: int(u.OutputTokens),
		},
	}
	if res.Model == "" {
		res.Model = requested
	}
	var text strings.Builder
	structured, answered := "", false
	for _, b := range msg.Content {
		switch {
		case b.Type == "text":
			text.WriteString(b.Text)
		case b.Type != "tool_use":
		case o.isOutput(b.Name):
			structured, answered = o.text(b.Input), true
		default:
			res.ToolCalls = append(res.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: model.Arguments(string(b.Input))})
		}
	}
	res.Text = text.String()
	if answered {
		res.Text = structured
	}
	res.FinishReason = finishReason(msg.StopReason, len(res.ToolCalls) > 0)
	return res
}

// finishReason normalizes a stop_reason: "stop", "length", "tool_calls"
// (only when the answer calls a function, not for the structured output's
// tool), "content_filter" for a refusal, or the API's own reason.
func finishReason(r sdk.StopReason, calls bool) string {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return "stop"
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return "length"
	case sdk.StopReasonToolUse:
		if calls {
			return model.FinishToolCalls
		}
		return "stop"
	case sdk.StopReasonRefusal:
		return "content_filter"
	}
	return strings.ToLower(string(r))
}
