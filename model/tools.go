package model

import (
	"encoding/json"
)

// RoleTool is the role of a message that answers a tool call.
const RoleTool = "tool"

// FinishToolCalls is the finish reason of an answer that calls tools.
const FinishToolCalls = "tool_calls"

// ToolCall is one call of a declared function by the model: the vendor's
// id of the call, the function's name and its arguments (a JSON object).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolCallDelta is a piece of a streamed tool call. Index tells the calls
// of one answer apart; the first delta of a call carries its ID and Name,
// and Arguments carries the next piece of the arguments' JSON text.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Arguments returns raw as a tool call's arguments: the JSON object it
// holds, an empty object when raw is empty, or raw wrapped as
// {"_raw": "..."} when the vendor sent text that is not a JSON object, so
// that a call's arguments are always an object.
func Arguments(raw string) json.RawMessage {
	if raw == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) == nil && obj != nil {
		return json.RawMessage(raw)
	}
	b, _ := json.Marshal(map[string]string{"_raw": raw})
	return b
}
