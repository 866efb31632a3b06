package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

const weatherSchema = `{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 10000000000000001}}, "required": ["city"]}`

// toolRequest is a tool loop's second turn: the user's question, the
// assistant's call and the tool's answer, with two functions declared.
func toolRequest(choice *canvas.ToolChoice) model.Request {
	return model.Request{
		Model: "gpt-test",
		Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "Weather in Paris?"},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_2", Name: "now"},
			}},
			{Role: model.RoleTool, ToolCallID: "call_1", Content: `{"temp": 21}`},
			{Role: model.RoleTool, ToolCallID: "call_2", Content: "noon"},
			{Role: canvas.RoleAssistant, Content: "Checking.", ToolCalls: []model.ToolCall{
				{ID: "call_3", Name: "now", Arguments: json.RawMessage(`{}`)},
			}},
		},
		Tools: []canvas.Function{
			{Name: "get_weather", Description: "The weather of a city.", Parameters: json.RawMessage(weatherSchema)},
			{Name: "now"},
		},
		ToolChoice: choice,
	}
}

func TestOpenAI_CompleteTools(t *testing.T) {
	t.Run("Request", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"21 degrees."}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		_, err := p.Complete(context.Background(), toolRequest(nil))
		require.NoError(t, err)
		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, mustJSON(t, `[
			{"role": "user", "content": "Weather in Paris?"},
			{"role": "assistant", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "now", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
			{"role": "tool", "tool_call_id": "call_2", "content": "noon"},
			{"role": "assistant", "content": "Checking.", "tool_calls": [
				{"id": "call_3", "type": "function", "function": {"name": "now", "arguments": "{}"}}
			]}
		]`), reqs[0]["messages"])
		assert.Equal(t, mustJSON(t, `[
			{"type": "function", "function": {"name": "get_weather", "description": "The weather of a city.", "parameters": `+weatherSchema+`}},
			{"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
		]`), reqs[0]["tools"])
		assert.NotContains(t, reqs[0], "tool_choice")
	})
	t.Run("ToolChoice", func(t *testing.T) {
		tests := []struct {
			name   string
			choice *canvas.ToolChoice
			want   string
		}{
			{"Auto", &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}, `"auto"`},
			{"None", &canvas.ToolChoice{Mode: canvas.ToolChoiceNone}, `"none"`},
			{"Required", &canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}, `"required"`},
			{"Function", &canvas.ToolChoice{Mode: canvas.ToolChoiceFunction, Name: "now"}, `{"type": "function", "function": {"name": "now"}}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
				p := mustOpenAI(t, openai.Options{BaseURL: url})

				_, err := p.Complete(context.Background(), toolRequest(tt.choice))
				require.NoError(t, err)
				require.Len(t, fake.Requests(), 1)
				assert.Equal(t, mustJSON(t, tt.want), fake.Requests()[0]["tool_choice"])
			})
		}
	})
	t.Run("ToolChoiceWithoutTools", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		_, err := p.Complete(context.Background(), model.Request{Model: "m", ToolChoice: &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto},
			Messages: []model.Message{{Role: canvas.RoleUser, Content: "hi"}}})
		require.NoError(t, err)
		assert.NotContains(t, fake.Requests()[0], "tools")
		assert.NotContains(t, fake.Requests()[0], "tool_choice")
	})
	t.Run("Invalid", func(t *testing.T) {
		tests := []struct {
			name string
			edit func(*model.Request)
		}{
			{"Parameters", func(r *model.Request) { r.Tools[0].Parameters = json.RawMessage(`[1]`) }},
			{"ToolChoice", func(r *model.Request) { r.ToolChoice = &canvas.ToolChoice{Mode: "always"} }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
				p := mustOpenAI(t, openai.Options{BaseURL: url})

				req := toolRequest(nil)
				tt.edit(&req)
				_, err := p.Complete(context.Background(), req)
				assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
				assert.Empty(t, fake.Requests())
			})
		}
	})
	t.Run("Answer", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Calls: []fakeCall{
			{ID: "call_a", Name: "get_weather", Args: []string{`{"city": "Paris"}`}},
			{ID: "call_b", Name: "now"},
			{ID: "call_c", Name: "get_weather", Args: []string{`Paris`}},
		}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		res, err := p.Complete(context.Background(), toolRequest(nil))
		require.NoError(t, err)
		assert.Equal(t, &model.Result{
			ToolCalls: []model.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_b", Name: "now", Arguments: json.RawMessage(`{}`)},
				{ID: "call_c", Name: "get_weather", Arguments: json.RawMessage(`{"_raw":"Paris"}`)},
			},
			Usage: model.Usage{InputTokens: 11, OutputTokens: 2}, Model: "gpt-test-2025", FinishReason: model.FinishToolCalls,
		}, res)
	})
}

func TestOpenAI_StreamTools(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"Let me ", "check."}, Calls: []fakeCall{
			{ID: "call_a", Name: "get_weather", Args: []string{`{"ci`, `ty": "Pa`, `ris"}`}},
			{ID: "call_b", Name: "now"},
		}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		var got []model.Chunk
		res, err := p.Stream(context.Background(), toolRequest(&canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}), func(c model.Chunk) error {
			got = append(got, c)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{
			{Text: "Let me "},
			{Text: "check."},
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "call_a", Name: "get_weather"}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"ci`}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `ty": "Pa`}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `ris"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 1, ID: "call_b", Name: "now"}},
		}, got)
		assert.Equal(t, &model.Result{
			Text: "Let me check.",
			ToolCalls: []model.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_b", Name: "now", Arguments: json.RawMessage(`{}`)},
			},
			Usage: model.Usage{InputTokens: 11, OutputTokens: 5}, Model: "gpt-test-2025", FinishReason: model.FinishToolCalls,
		}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "required", reqs[0]["tool_choice"])
		assert.Len(t, reqs[0]["tools"], 2)
	})
	t.Run("SameAsComplete", func(t *testing.T) {
		f := &fakeOpenAI{Calls: []fakeCall{{ID: "call_a", Name: "get_weather", Args: []string{`{"city":`, ` "Oslo"}`}}}}
		_, url := newFakeOpenAI(t, f)
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		streamed, err := p.Stream(context.Background(), toolRequest(nil), nil)
		require.NoError(t, err)
		completed, err := p.Complete(context.Background(), toolRequest(nil))
		require.NoError(t, err)
		assert.Equal(t, completed, streamed)
	})
	t.Run("EmitError", func(t *testing.T) {
		_, url := newFakeOpenAI(t, &fakeOpenAI{Calls: []fakeCall{{ID: "call_a", Name: "now", Args: []string{"{", "}"}}}})
		p := mustOpenAI(t, openai.Options{BaseURL: url})

		stop := errors.New("client gone")
		n := 0
		_, err := p.Stream(context.Background(), toolRequest(nil), func(c model.Chunk) error {
			n++
			if c.ToolCall != nil && c.ToolCall.Arguments == "{" {
				return stop
			}
			return nil
		})
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, 2, n)
	})
}
