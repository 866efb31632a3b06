package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeCompletion_SameAsDecodeJSON: the completion body, parsed once,
// reads into the same request, or is refused with the same error, as
// decodeJSON's parse, validation and json.Unmarshal give.
func TestDecodeCompletion_SameAsDecodeJSON(t *testing.T) {
	s, err := newServer(Options{MaxBodyBytes: 1 << 16})
	require.NoError(t, err)
	const id = `"8e03978e-40d5-43e8-bc93-6894a57f9324"`
	for name, body := range map[string]string{
		"Minimal":   `{"canvas_id": ` + id + `}`,
		"Empty":     ``,
		"NotJSON":   `{"canvas_id": `,
		"TwoValues": `{} {}`,
		"BadUTF8":   "{\"canvas_id\": " + id + ", \"variables\": {\"a\": \"\xff\"}}",
		"Everything": `{"canvas_id": ` + id + `, "variables": {"n": 1, "f": 1.5, "e": 1e3, "big": 12345678901234567890,
			"list": [1, "two", null, {"x": -0}], "obj": {"y": true}}, "messages": [{"content": "hi", "extra": 1}, {"content": ""}],
			"webhook_url": "https://example.com/hook", "stream": true, "async": false, "environment_name": "",
			"version_id": ` + id + `, "application_id": ` + id + `, "unknown": {"kept": "out"},
			"settings": {"model": "echo", "temperature": 0.7, "maxTokens": 256, "topP": 1,
				"structuredOutput": {"enabled": true, "schema": {"type": "object",  "required": ["b", "a"],
					"properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}}}}`,
		"RepeatedSettings": `{"canvas_id": ` + id + `, "settings": {"structuredOutput": {"schema": {"z": 1}}},
			"settings": {"structuredOutput": {"enabled": false, "schema": {"type": "object", "b": 1, "a": 2}}}}`,
		"StructuredNoSchema":    `{"canvas_id": ` + id + `, "settings": {"structuredOutput": {"enabled": true}}}`,
		"MaxTokensFraction":     `{"canvas_id": ` + id + `, "settings": {"maxTokens": 1.5}}`,
		"MaxTokensExponent":     `{"canvas_id": ` + id + `, "settings": {"maxTokens": 1e3}}`,
		"MaxTokensHuge":         `{"canvas_id": ` + id + `, "settings": {"maxTokens": 99999999999999999999}}`,
		"VariableOutOfRange":    `{"canvas_id": ` + id + `, "variables": {"x": [1, 2e400]}}`,
		"Invalid":               `{"canvas_id": "nope", "stream": "yes", "messages": [{}], "settings": {"temperature": 3}}`,
		"EnvironmentAndVersion": `{"canvas_id": ` + id + `, "environment_name": "production", "version_id": ` + id + `}`,
		"ToolLoop": `{"canvas_id": ` + id + `, "messages": [{"content": "plain"}, {"role": "system", "content": "s"},
			{"role": "assistant", "toolCalls": [{"id": "c1", "name": "f", "arguments": {"z": 1, "a": [1.50, "x"]}},
				{"id": "c2", "name": "g", "arguments": {}, "arguments": { "last" : true }}]},
			{"role": "tool", "toolCallId": "c1", "content": "{\"ok\":true}"}, {"role": "user", "content": "u"}],
			"settings": {"credentialId": ` + id + `}}`,
		"ToolMessageWithoutCall":     `{"canvas_id": ` + id + `, "messages": [{"role": "tool", "content": "x"}]}`,
		"AssistantWithoutAnything":   `{"canvas_id": ` + id + `, "messages": [{"role": "assistant"}]}`,
		"UserWithToolCalls":          `{"canvas_id": ` + id + `, "messages": [{"content": "x", "toolCalls": [{"id": "c", "name": "f", "arguments": {}}]}]}`,
		"ToolCallArgumentsNotObject": `{"canvas_id": ` + id + `, "messages": [{"role": "assistant", "toolCalls": [{"id": "c", "name": "f", "arguments": "{}"}]}]}`,
		"CredentialNotUUID":          `{"canvas_id": ` + id + `, "settings": {"credentialId": "key"}}`,
		"NotAnObject":                `[]`,
		"Null":                       `null`,
	} {
		t.Run(name, func(t *testing.T) {
			var want wire.CompletionRequest
			wantErr := s.decodeJSON(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), "CompletionRequest", &want)
			got, err := s.decodeCompletion(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)),
				func(bool) error { return nil })
			if wantErr != nil {
				require.Error(t, err)
				assert.Equal(t, canvas.ErrorCode(wantErr), canvas.ErrorCode(err))
				assert.Equal(t, canvas.ErrorMessage(wantErr), canvas.ErrorMessage(err))
				assert.ElementsMatch(t, canvas.ErrorDetails(wantErr), canvas.ErrorDetails(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want, got)
			if want.Settings != nil && want.Settings.StructuredOutput != nil {
				assert.Equal(t, string(want.Settings.StructuredOutput.Schema), string(got.Settings.StructuredOutput.Schema),
					"the schema keeps the body's bytes")
			}
		})
	}
}

// TestDecodeCompletion_Admit: admit is asked, before the validation, whether
// the body queues model work; what it refuses is not validated.
func TestDecodeCompletion_Admit(t *testing.T) {
	s, err := newServer(Options{MaxBodyBytes: 1 << 16})
	require.NoError(t, err)
	refused := canvas.Errorf(canvas.ERATELIMITED, "busy")
	for name, tc := range map[string]struct {
		body   string
		queues bool
	}{
		"Sync":            {`{"canvas_id": "x"}`, false},
		"Async":           {`{"canvas_id": "x", "async": true}`, true},
		"Webhook":         {`{"canvas_id": "x", "webhook_url": "https://example.com"}`, true},
		"AsyncNotBoolean": {`{"canvas_id": "x", "async": "yes"}`, false},
		"NotAnObject":     {`[1]`, false},
	} {
		t.Run(name, func(t *testing.T) {
			var asked []bool
			_, err := s.decodeCompletion(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(tc.body))),
				func(queues bool) error {
					asked = append(asked, queues)
					if queues {
						return refused
					}
					return nil
				})
			assert.Equal(t, []bool{tc.queues}, asked)
			if tc.queues {
				assert.Same(t, refused, err, "refused before the invalid canvas_id is looked at")
			} else {
				assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			}
		})
	}
}

// TestRawMember reads a member's bytes as they are in the body.
func TestRawMember(t *testing.T) {
	body := []byte(`{"a": {"b": 1}, "s": {"o": {"schema": {"z": 1,  "a": [2]}}}, "a": {"b": {"c": true}}}`)
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"s", "o", "schema"}, `{"z": 1,  "a": [2]}`},
		{[]string{"a", "b"}, `{"c": true}`},
		{[]string{"a", "b", "c"}, `true`},
		{[]string{"missing"}, ``},
		{[]string{"s", "missing", "x"}, ``},
	} {
		raw, err := rawMember(body, tc.path...)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(raw), tc.path)
	}
	_, err := rawMember([]byte(`[1]`), "a")
	assert.Error(t, err)
}
