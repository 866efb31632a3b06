package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// weather is a function with parameters, clock one without.
var (
	weather = canvas.Function{Name: "get_weather", Description: "Weather of a city.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 12345678901234567890}}, "required": ["city"], "additionalProperties": false}`)}
	clock = canvas.Function{Name: "clock"}
)

func TestProvider_Tools(t *testing.T) {
	t.Run("Declared", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		req := chatRequest()
		req.Tools = []canvas.Function{weather, clock}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)

		body := fake.Requests()[0]
		assert.Equal(t, mustJSON(t, `[
			{"name": "get_weather", "description": "Weather of a city.", "input_schema": {"type": "object",
				"properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 12345678901234567890}},
				"required": ["city"], "additionalProperties": false}},
			{"name": "clock", "input_schema": {"type": "object", "properties": {}}}
		]`), body["tools"])
		assert.NotContains(t, body, "tool_choice")
		assert.Contains(t, fake.Raw(0), "12345678901234567890", "the schema's numbers are sent as written")
	})
	t.Run("Choice", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			choice *canvas.ToolChoice
			want   string
		}{
			{"Auto", &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}, `{"type": "auto"}`},
			{"Required", &canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}, `{"type": "any"}`},
			{"None", &canvas.ToolChoice{Mode: canvas.ToolChoiceNone}, `{"type": "none"}`},
			{"Function", &canvas.ToolChoice{Mode: canvas.ToolChoiceFunction, Name: "clock"}, `{"type": "tool", "name": "clock"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
				req := chatRequest()
				req.Tools, req.ToolChoice = []canvas.Function{weather, clock}, tc.choice
				_, err := mustProvider(t, url).Complete(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, mustJSON(t, tc.want), fake.Requests()[0]["tool_choice"])
			})
		}
	})
	t.Run("ChoiceWithoutTools", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		req := chatRequest()
		req.ToolChoice = &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.NotContains(t, fake.Requests()[0], "tool_choice")
		assert.NotContains(t, fake.Requests()[0], "tools")
	})
	t.Run("BadParameters", func(t *testing.T) {
		for _, params := range []string{`{"type": "string"}`, `[1]`} {
			fake, url := newFake(t, &fakeAnthropic{})
			req := chatRequest()
			req.Tools = []canvas.Function{clock, {Name: "bad", Parameters: json.RawMessage(params)}}
			_, err := mustProvider(t, url).Complete(context.Background(), req)
			var e *canvas.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, canvas.EINVALID, e.Code)
			require.Len(t, e.Details, 1)
			assert.Equal(t, "/json/configuration/functions/1/parameters", e.Details[0].Path)
			assert.Empty(t, fake.Requests())
		}
	})
	t.Run("Calls", func(t *testing.T) {
		_, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: []fakeBlock{
			{Text: []string{"Let me check."}},
			{ToolID: "toolu_1", ToolName: "get_weather", Input: []string{`{"city": `, `"Paris"}`}},
			{ToolID: "toolu_2", ToolName: "clock"},
		}})
		req := chatRequest()
		req.Tools = []canvas.Function{weather, clock}
		res, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "Let me check.", res.Text)
		assert.Equal(t, model.FinishToolCalls, res.FinishReason)
		require.Len(t, res.ToolCalls, 2)
		assert.Equal(t, "toolu_1", res.ToolCalls[0].ID)
		assert.Equal(t, "get_weather", res.ToolCalls[0].Name)
		assert.JSONEq(t, `{"city": "Paris"}`, string(res.ToolCalls[0].Arguments))
		assert.Equal(t, model.ToolCall{ID: "toolu_2", Name: "clock", Arguments: json.RawMessage("{}")}, res.ToolCalls[1])
	})
	t.Run("Loop", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"Sunny, 12:00."}}}})
		req := model.Request{Model: "claude-test", Tools: []canvas.Function{weather, clock}, Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "Use tools."},
			{Role: canvas.RoleUser, Content: "Weather and time?"},
			{Role: canvas.RoleUser, Content: "In Paris."},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "toolu_2", Name: "clock", Arguments: json.RawMessage(`not json`)},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "sunny"},
			{Role: model.RoleTool, ToolCallID: "toolu_2", Content: ""},
			{Role: canvas.RoleFunction, Content: "legacy result"},
			{Role: canvas.RoleAssistant, Content: "Thanks."},
			{Role: canvas.RoleAssistant, Content: ""},
		}}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, mustJSON(t, `[
			{"role": "user", "content": [{"type": "text", "text": "Weather and time?"}, {"type": "text", "text": "In Paris."}]},
			{"role": "assistant", "content": [
				{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
				{"type": "tool_use", "id": "toolu_2", "name": "clock", "input": {"_raw": "not json"}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
				{"type": "tool_result", "tool_use_id": "toolu_2"},
				{"type": "text", "text": "legacy result"}]},
			{"role": "assistant", "content": [{"type": "text", "text": "Thanks."}]}
		]`), fake.Requests()[0]["messages"])
		assert.Equal(t, mustJSON(t, `[{"type": "text", "text": "Use tools."}]`), fake.Requests()[0]["system"])
	})
	t.Run("ToolResultsFirst", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		req := model.Request{Model: "claude-test", Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "Time?"},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_1", Name: "clock", Arguments: json.RawMessage(`{}`)}}},
			{Role: canvas.RoleUser, Content: "Quickly."},
			{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "12:00"},
		}}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		msgs := fake.Requests()[0]["messages"].([]any)
		require.Len(t, msgs, 3)
		assert.Equal(t, mustJSON(t, `{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "12:00"}]},
			{"type": "text", "text": "Quickly."}]}`), msgs[2])
	})
}

func TestProvider_StructuredOutput(t *testing.T) {
	const schema = `{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}`
	structured := func(schema string) model.Request {
		req := chatRequest()
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(schema)}
		return req
	}
	t.Run("Object", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: []fakeBlock{
			{ToolID: "toolu_1", ToolName: "output", Input: []string{`{"answer": `, `"hi"}`}}}})
		req := structured(schema)
		res, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.JSONEq(t, `{"answer": "hi"}`, res.Text)
		assert.NoError(t, model.ValidateOutput(req.StructuredOutput.Schema, res.Text))
		assert.Empty(t, res.ToolCalls)
		assert.Equal(t, "stop", res.FinishReason)

		body := fake.Requests()[0]
		assert.Equal(t, mustJSON(t, `[{"name": "output", "description": "Give the answer as this tool's input.", "input_schema": `+schema+`}]`), body["tools"])
		assert.Equal(t, mustJSON(t, `{"type": "tool", "name": "output"}`), body["tool_choice"])
	})
	t.Run("Wrapped", func(t *testing.T) {
		const list = `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "items": {"$ref": "#/$defs/word"}, "$defs": {"word": {"type": "string"}}}`
		fake, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: []fakeBlock{
			{ToolID: "toolu_1", ToolName: "output", Input: []string{`{"value": ["a", `, `"b"]}`}}}})
		req := structured(list)
		res, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.JSONEq(t, `["a", "b"]`, res.Text)
		assert.NoError(t, model.ValidateOutput(req.StructuredOutput.Schema, res.Text))

		tools := fake.Requests()[0]["tools"].([]any)
		require.Len(t, tools, 1)
		assert.Equal(t, mustJSON(t, `{"type": "object", "required": ["value"],
			"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"word": {"type": "string"}},
			"properties": {"value": {"type": "array", "items": {"$ref": "#/$defs/word"}}}}`), tools[0].(map[string]any)["input_schema"])
	})
	t.Run("WithTools", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			choice *canvas.ToolChoice
			want   string
		}{
			{"Default", nil, `{"type": "any"}`},
			{"Auto", &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}, `{"type": "any"}`},
			{"Required", &canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}, `{"type": "any"}`},
			{"None", &canvas.ToolChoice{Mode: canvas.ToolChoiceNone}, `{"type": "tool", "name": "output"}`},
			{"Function", &canvas.ToolChoice{Mode: canvas.ToolChoiceFunction, Name: "clock"}, `{"type": "tool", "name": "clock"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fake, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: []fakeBlock{
					{ToolID: "toolu_1", ToolName: "clock", Input: []string{`{}`}}}})
				req := structured(schema)
				req.Tools, req.ToolChoice = []canvas.Function{clock}, tc.choice
				res, err := mustProvider(t, url).Complete(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, model.FinishToolCalls, res.FinishReason)
				assert.Equal(t, []model.ToolCall{{ID: "toolu_1", Name: "clock", Arguments: json.RawMessage("{}")}}, res.ToolCalls)

				body := fake.Requests()[0]
				assert.Equal(t, mustJSON(t, tc.want), body["tool_choice"])
				tools := body["tools"].([]any)
				require.Len(t, tools, 2)
				assert.Equal(t, "clock", tools[0].(map[string]any)["name"])
				assert.Equal(t, "output", tools[1].(map[string]any)["name"])
			})
		}
	})
	t.Run("ReservedName", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{})
		req := structured(schema)
		req.Tools = []canvas.Function{{Name: "output"}}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())

		req.StructuredOutput.Enabled = false
		_, err = mustProvider(t, url).Complete(context.Background(), req)
		assert.NoError(t, err, "without structured output the name is free")
	})
	t.Run("InvalidSchema", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{})
		_, err := mustProvider(t, url).Complete(context.Background(), structured(`{"type": 5}`))
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
	t.Run("Disabled", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		req := structured(schema)
		req.StructuredOutput.Enabled = false
		res, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text)
		assert.NotContains(t, fake.Requests()[0], "tools")
	})
}
