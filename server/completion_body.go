package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// decodeCompletion reads the body of POST /v2/chat/completions: parsed
// once (readJSON), looked at for whether it queues model work, which
// admit may refuse before anything else is spent on it, validated once
// against the CompletionRequest schema (422 listing every problem), and
// read into the request from the parsed document. Members are read as the
// schema sees them: names matched exactly, the last of repeated members.
func (s *Server) decodeCompletion(r *http.Request, admit func(queues bool) error) (wire.CompletionRequest, error) {
	var req wire.CompletionRequest
	body, doc, err := s.readJSON(r)
	if err != nil {
		return req, err
	}
	if err := admit(queuesWork(doc)); err != nil {
		return req, err
	}
	if err := s.schemas.validate("CompletionRequest", doc); err != nil {
		return req, err
	}
	return completionRequestOf(doc, body)
}

// queuesWork reports whether a parsed completion body asks for an
// asynchronous run (async, or a webhook_url), which queues model work.
func queuesWork(doc any) bool {
	m, _ := doc.(map[string]any)
	async, _ := m["async"].(bool)
	hook, _ := m["webhook_url"].(string)
	return async || hook != ""
}

// completionRequestOf reads a document the CompletionRequest schema
// accepted into the request. Numbers in variables become float64, as
// json.Unmarshal makes them; a number no Go type holds (variables beyond
// float64, a maxTokens that is not an int) is 422 at its member, as
// unmarshalDetail words it. The structured output schema and the arguments
// of tool calls are kept as the body's bytes, so that their members keep
// their order.
func completionRequestOf(doc any, body []byte) (wire.CompletionRequest, error) {
	var err error
	m, _ := doc.(map[string]any)
	req := wire.CompletionRequest{
		CanvasID:        str(m, "canvas_id"),
		WebhookURL:      str(m, "webhook_url"),
		Stream:          boolean(m, "stream"),
		Async:           boolean(m, "async"),
		EnvironmentName: str(m, "environment_name"),
		VersionID:       str(m, "version_id"),
		ApplicationID:   str(m, "application_id"),
		AssignmentKey:   str(m, "assignment_key"),
	}
	if v, ok := m["variables"].(map[string]any); ok {
		plain, ok := plainValue(v)
		if !ok {
			return req, wrongType("variables")
		}
		req.Variables = plain.(map[string]any)
	}
	if msgs, ok := m["messages"].([]any); ok {
		req.Messages = make([]wire.CompletionMessage, 0, len(msgs))
		var raw []json.RawMessage // the messages' bytes, read for tool calls only
		for i, msg := range msgs {
			mm, _ := msg.(map[string]any)
			cm := wire.CompletionMessage{Role: str(mm, "role"), Content: str(mm, "content"), ToolCallID: str(mm, "toolCallId")}
			if calls, ok := mm["toolCalls"].([]any); ok && len(calls) > 0 {
				if raw == nil {
					if raw, err = rawItems(body, "messages"); err != nil {
						return req, canvas.Errorf(canvas.EBADREQUEST, "Request body is not valid JSON.")
					}
				}
				if cm.ToolCalls, err = toolCallsOf(calls, raw[i]); err != nil {
					return req, canvas.Errorf(canvas.EBADREQUEST, "Request body is not valid JSON.")
				}
			}
			req.Messages = append(req.Messages, cm)
		}
	}
	sm, ok := m["settings"].(map[string]any)
	if !ok {
		return req, nil
	}
	st := &wire.Settings{}
	if v, ok := sm["model"].(string); ok {
		st.Model = &v
	}
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"temperature", &st.Temperature}, {"topP", &st.TopP}} {
		if n, ok := sm[f.name].(json.Number); ok {
			x, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return req, wrongType("settings/" + f.name)
			}
			*f.dst = &x
		}
	}
	if n, ok := sm["maxTokens"].(json.Number); ok {
		x, err := strconv.ParseInt(string(n), 10, strconv.IntSize)
		if err != nil {
			return req, wrongType("settings/maxTokens")
		}
		maxTokens := int(x)
		st.MaxTokens = &maxTokens
	}
	if v, ok := sm["credentialId"].(string); ok {
		st.CredentialID = &v
	}
	if so, ok := sm["structuredOutput"].(map[string]any); ok {
		st.StructuredOutput = &wire.StructuredOutput{Enabled: boolean(so, "enabled")}
		if _, ok := so["schema"]; ok {
			raw, err := rawMember(body, "settings", "structuredOutput", "schema")
			if err != nil {
				return req, canvas.Errorf(canvas.EBADREQUEST, "Request body is not valid JSON.")
			}
			st.StructuredOutput.Schema = raw
		}
	}
	req.Settings = st
	return req, nil
}

// toolCallsOf reads the tool calls of an assistant message: calls as
// parsed, and the message's bytes, which keep each call's arguments as the
// body wrote them.
func toolCallsOf(calls []any, msg json.RawMessage) ([]wire.ToolCall, error) {
	raw, err := rawItems(msg, "toolCalls")
	if err != nil || len(raw) != len(calls) {
		return nil, errors.New("tool calls do not match")
	}
	out := make([]wire.ToolCall, 0, len(calls))
	for i, c := range calls {
		cm, _ := c.(map[string]any)
		args, err := rawMember(raw[i], "arguments")
		if err != nil {
			return nil, err
		}
		out = append(out, wire.ToolCall{ID: str(cm, "id"), Name: str(cm, "name"), Arguments: args})
	}
	return out, nil
}

// rawItems returns the bytes of each item of the array at path in body, a
// JSON object (rawMember).
func rawItems(body []byte, path ...string) ([]json.RawMessage, error) {
	raw, err := rawMember(body, path...)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	return items, json.Unmarshal(raw, &items)
}

func str(m map[string]any, name string) string {
	v, _ := m[name].(string)
	return v
}

func boolean(m map[string]any, name string) bool {
	v, _ := m[name].(bool)
	return v
}

// wrongType is the 422 of a member whose number no Go type holds.
func wrongType(path string) error {
	return canvas.Invalid("Request body failed validation.",
		canvas.Detail{Path: "/json/" + path, Message: "has the wrong type"})
}

// plainValue returns v with every json.Number made a float64, as
// json.Unmarshal decodes a number into an interface; false when one is
// beyond float64.
func plainValue(v any) (any, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		return f, err == nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			p, ok := plainValue(x)
			if !ok {
				return nil, false
			}
			out[k] = p
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			p, ok := plainValue(x)
			if !ok {
				return nil, false
			}
			out[i] = p
		}
		return out, true
	}
	return v, true
}

// rawMember returns the bytes of the member at path in body, a JSON
// object, by scanning it without decoding the values it passes; as when
// decoding, the last of repeated members counts. It is nil when the
// member is absent.
func rawMember(body []byte, path ...string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var raw json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key != path[0] {
			continue
		}
		raw = v
		if len(path) > 1 {
			// A value that is not an object holds no member.
			raw, _ = rawMember(v, path[1:]...)
		}
	}
	return raw, nil
}
