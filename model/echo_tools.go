package model

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// EchoCallID is the id of the tool call the echo model answers with.
const EchoCallID = "call_echo_0"

// echoToolCall returns the tool call echo answers req with, or nil when it
// answers with text: see Echo for the rule.
func echoToolCall(req Request) *ToolCall {
	if len(req.Tools) == 0 {
		return nil
	}
	mode := canvas.ToolChoiceAuto
	if req.ToolChoice != nil {
		mode = req.ToolChoice.Mode
	}
	if mode == canvas.ToolChoiceNone {
		return nil
	}
	text := lastUserContent(req.Messages)
	var fn *canvas.Function
	at := -1 // where the arguments may start in text
	if mode == canvas.ToolChoiceFunction {
		for i := range req.Tools {
			if req.Tools[i].Name == req.ToolChoice.Name {
				fn = &req.Tools[i]
				break
			}
		}
		if fn == nil {
			return nil
		}
		at = nameEnd(text, fn.Name)
	} else {
		fn, at = calledFunction(text, req.Tools)
		if fn == nil && mode == canvas.ToolChoiceRequired {
			fn = &req.Tools[0]
			at = nameEnd(text, fn.Name)
		}
	}
	if fn == nil {
		return nil
	}
	var args json.RawMessage
	if at >= 0 {
		args = objectAfter(text, at)
	}
	if args == nil {
		args = zeroArguments(fn.Parameters)
	}
	return &ToolCall{ID: EchoCallID, Name: fn.Name, Arguments: args}
}

// lastUserContent returns the content of the last user message of msgs.
func lastUserContent(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == canvas.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// calledFunction returns the function of fns that text asks for first with
// "call <name>" ("call" in any case, a word of its own, then blanks, then
// the name as a word of its own), and where its name ends in text; nil and
// -1 when text asks for none.
func calledFunction(text string, fns []canvas.Function) (*canvas.Function, int) {
	for i := 0; i+len("call") <= len(text); i++ {
		if !strings.EqualFold(text[i:i+len("call")], "call") || i > 0 && nameByte(text[i-1]) {
			continue
		}
		j := i + len("call")
		k := j
		for k < len(text) && isBlank(text[k]) {
			k++
		}
		if k == j {
			continue
		}
		for f := range fns {
			if end := k + len(fns[f].Name); strings.HasPrefix(text[k:], fns[f].Name) && (end == len(text) || !nameByte(text[end])) {
				return &fns[f], end
			}
		}
	}
	return nil, -1
}

// nameEnd returns where the first occurrence of name in text as a word of
// its own ends, or -1.
func nameEnd(text, name string) int {
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(name)
		if (i == 0 || !nameByte(text[i-1])) && (end == len(text) || !nameByte(text[end])) {
			return end
		}
		from = i + 1
	}
	return -1
}

// nameByte reports whether b may be part of a function name.
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// maxObjectTries bounds the braces objectAfter tries, so that a message
// full of braces costs little.
const maxObjectTries = 64

// objectAfter returns, compacted, the first JSON object written in text at
// or after from, or nil.
func objectAfter(text string, from int) json.RawMessage {
	for tries := 0; tries < maxObjectTries && from < len(text); tries++ {
		i := strings.IndexByte(text[from:], '{')
		if i < 0 {
			return nil
		}
		from += i
		var raw json.RawMessage
		if json.NewDecoder(strings.NewReader(text[from:])).Decode(&raw) == nil {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				return b.Bytes()
			}
		}
		from++
	}
	return nil
}

// zeroArguments returns the arguments object built from a parameters
// schema: each required property set to its const, else its first enum
// value, else the zero value of its type ("" for a string, 0 for a number
// or an integer, false for a boolean, [] for an array, {} for an object,
// null otherwise; of a list of types the first that is not "null"). A
// schema without required properties, or that is not an object, gives {}.
func zeroArguments(params json.RawMessage) json.RawMessage {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(params, &schema) != nil || len(schema.Required) == 0 {
		return json.RawMessage("{}")
	}
	args := make(map[string]json.RawMessage, len(schema.Required))
	for _, name := range schema.Required {
		args[name] = zeroValue(schema.Properties[name])
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// zeroValue returns the value zeroArguments gives a property of schema
// prop.
func zeroValue(prop json.RawMessage) json.RawMessage {
	var s struct {
		Type  json.RawMessage   `json:"type"`
		Const json.RawMessage   `json:"const"`
		Enum  []json.RawMessage `json:"enum"`
	}
	if json.Unmarshal(prop, &s) != nil {
		return json.RawMessage("null")
	}
	if len(s.Const) > 0 {
		return s.Const
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	var types []string
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		types = []string{one}
	} else {
		_ = json.Unmarshal(s.Type, &types)
	}
	for _, t := range types {
		switch t {
		case "string":
			return json.RawMessage(`""`)
		case "number", "integer":
			return json.RawMessage("0")
		case "boolean":
			return json.RawMessage("false")
		case "array":
			return json.RawMessage("[]")
		case "object":
			return json.RawMessage("{}")
		}
	}
	return json.RawMessage("null")
}

// echoToolResults returns the text echo answers when the last messages of
// msgs answer tool calls: one line per trailing tool message, in order,
// "<name> returned: <content>", where name is that of the call the message
// answers (its ToolCallID when no earlier assistant message made that
// call). ok is false when the last message is not a tool message.
func echoToolResults(msgs []Message) (text string, ok bool) {
	first := len(msgs)
	for first > 0 && msgs[first-1].Role == RoleTool {
		first--
	}
	if first == len(msgs) {
		return "", false
	}
	names := make(map[string]string)
	for _, m := range msgs[:first] {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	lines := make([]string, 0, len(msgs)-first)
	for _, m := range msgs[first:] {
		name, known := names[m.ToolCallID]
		if !known {
			name = m.ToolCallID
		}
		lines = append(lines, name+" returned: "+m.Content)
	}
	return strings.Join(lines, "\n"), true
}
