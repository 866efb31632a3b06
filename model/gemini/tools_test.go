package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// toolRequest declares two functions, one without parameters.
func toolRequest() model.Request {
	return model.Request{
		Model:    "gemini-test",
		Messages: []model.Message{{Role: canvas.RoleUser, Content: "Weather in Paris?"}},
		Tools: []canvas.Function{
			{Name: "get_weather", Description: "Current weather.", Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)},
			{Name: "now"},
		},
	}
}

func TestProvider_Tools(t *testing.T) {
	t.Run("Declarations", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		_, err := mustGemini(t, url).Complete(context.Background(), toolRequest())
		require.NoError(t, err)

		require.Len(t, fake.Requests(), 1)
		body := fake.Requests()[0].Body
		assertJSON(t, `[{"functionDeclarations": [
			{"name": "get_weather", "description": "Current weather.",
			 "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
			{"name": "now", "parametersJsonSchema": {"type": "object", "properties": {}}}
		]}]`, body["tools"])
		assert.NotContains(t, body, "toolConfig", "no choice: Gemini's default")
	})
	t.Run("ToolChoice", func(t *testing.T) {
		tests := []struct {
			choice canvas.ToolChoice
			want   string
		}{
			{canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}, `{"functionCallingConfig": {"mode": "AUTO"}}`},
			{canvas.ToolChoice{Mode: canvas.ToolChoiceNone}, `{"functionCallingConfig": {"mode": "NONE"}}`},
			{canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}, `{"functionCallingConfig": {"mode": "ANY"}}`},
			{canvas.ToolChoice{Mode: canvas.ToolChoiceFunction, Name: "now"},
				`{"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["now"]}}`},
		}
		for _, tt := range tests {
			t.Run(tt.choice.Mode, func(t *testing.T) {
				fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
				req := toolRequest()
				req.ToolChoice = &tt.choice
				_, err := mustGemini(t, url).Complete(context.Background(), req)
				require.NoError(t, err)
				require.Len(t, fake.Requests(), 1)
				assertJSON(t, tt.want, fake.Requests()[0].Body["toolConfig"])
			})
		}
	})
	t.Run("Calls", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Parts: []string{
			`{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnbmF0dXJl"}`,
			`{"functionCall": {"name": "now"}}`,
			`{"functionCall": {"id": "fc-77", "name": "get_weather", "args": {"city": "Oslo"}}}`,
		}})
		res, err := mustGemini(t, url).Complete(context.Background(), toolRequest())
		require.NoError(t, err)
		assert.Equal(t, model.FinishToolCalls, res.FinishReason)
		assert.Empty(t, res.Text)
		assert.Equal(t, []model.ToolCall{
			{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "call_1", Name: "now", Arguments: json.RawMessage(`{}`)},
			{ID: "fc-77", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
		}, res.ToolCalls)
	})
	t.Run("StreamDeltas", func(t *testing.T) {
		_, url := newFake(t, &fakeGemini{Parts: []string{
			`{"text": "Checking."}`,
			`{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}`,
			`{"functionCall": {"name": "now", "args": {}}}`,
		}})
		var chunks []model.Chunk
		res, err := mustGemini(t, url).Stream(context.Background(), toolRequest(), func(c model.Chunk) error {
			chunks = append(chunks, c)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{
			{Text: "Checking."},
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 1, ID: "call_1", Name: "now", Arguments: `{}`}},
		}, chunks)
		assert.Equal(t, &model.Result{
			Text: "Checking.",
			ToolCalls: []model.ToolCall{
				{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_1", Name: "now", Arguments: json.RawMessage(`{}`)},
			},
			Usage: model.Usage{InputTokens: 11, OutputTokens: 5}, Model: "gemini-test-001", FinishReason: model.FinishToolCalls,
		}, res)
	})
	t.Run("Loop", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Sunny in Paris, 21°C, at noon."}`}})
		req := toolRequest()
		req.Messages = append(req.Messages,
			model.Message{Role: canvas.RoleAssistant, Content: "Checking.", ToolCalls: []model.ToolCall{
				{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris", "days": 10000000000000001}`)},
				{ID: "fc-77", Name: "now", Arguments: json.RawMessage(`{}`)},
			}},
			model.Message{Role: model.RoleTool, ToolCallID: "call_0", Content: `{"sky": "sunny", "celsius": 21}`},
			model.Message{Role: model.RoleTool, ToolCallID: "fc-77", Content: "12:00"},
			model.Message{Role: canvas.RoleUser, Content: "Thanks."},
		)
		res, err := mustGemini(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "stop", res.FinishReason)

		require.Len(t, fake.Requests(), 1)
		assertJSON(t, `[
			{"role": "user", "parts": [{"text": "Weather in Paris?"}]},
			{"role": "model", "parts": [
				{"text": "Checking."},
				{"functionCall": {"name": "get_weather", "args": {"city": "Paris", "days": 10000000000000001}},
				 "thoughtSignature": "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="},
				{"functionCall": {"id": "fc-77", "name": "now"}}
			]},
			{"role": "user", "parts": [
				{"functionResponse": {"name": "get_weather", "response": {"sky": "sunny", "celsius": 21}}},
				{"functionResponse": {"id": "fc-77", "name": "now", "response": {"content": "12:00"}}},
				{"text": "Thanks."}
			]}
		]`, fake.Requests()[0].Body["contents"])
	})
	t.Run("UnknownCall", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		req := toolRequest()
		req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: "call_9", Content: "x"})
		_, err := mustGemini(t, url).Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
}

func TestProvider_Files(t *testing.T) {
	img := model.File{Name: "cat.png", MIMEType: "image/png", Size: 3, Data: []byte("png"), Image: true}
	pdf := model.File{Name: "q3.pdf", MIMEType: "application/pdf", Size: 3, Data: []byte("pdf")}
	t.Run("InlineData", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		_, err := mustGemini(t, url).Complete(context.Background(), model.Request{Model: "gemini-test", Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "Policy: [file name=q3.pdf type=application/pdf size=3]", Files: []model.File{pdf}},
			{Role: canvas.RoleUser, Content: "Look at [file name=cat.png type=image/png size=3]", Files: []model.File{img}},
			{Role: canvas.RoleAssistant, Content: "A cat."},
			{Role: canvas.RoleUser, Content: "Thanks."},
		}})
		require.NoError(t, err)

		require.Len(t, fake.Requests(), 1)
		body := fake.Requests()[0].Body
		assertJSON(t, `{"role": "user", "parts": [{"text": "Policy: [file name=q3.pdf type=application/pdf size=3]"}]}`, body["systemInstruction"])
		assertJSON(t, `[
			{"role": "user", "parts": [
				{"inlineData": {"mimeType": "application/pdf", "data": "cGRm"}},
				{"text": "Look at [file name=cat.png type=image/png size=3]"},
				{"inlineData": {"mimeType": "image/png", "data": "cG5n"}}
			]},
			{"role": "model", "parts": [{"text": "A cat."}]},
			{"role": "user", "parts": [{"text": "Thanks."}]}
		]`, body["contents"])
	})
	t.Run("Unsupported", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
		_, err := mustGemini(t, url).Complete(context.Background(), model.Request{Model: "gemini-test", Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "Unzip [file]", Files: []model.File{{Name: "a.zip", MIMEType: "application/zip", Data: []byte("zip")}}},
		}})
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Contains(t, canvas.ErrorMessage(err), `"a.zip"`)
		assert.Empty(t, fake.Requests())
	})
}
