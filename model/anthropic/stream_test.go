package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// collect returns an emit function recording every chunk into chunks.
func collect(chunks *[]model.Chunk) func(model.Chunk) error {
	return func(c model.Chunk) error {
		*chunks = append(*chunks, c)
		return nil
	}
}

func TestProvider_Stream(t *testing.T) {
	t.Run("Text", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"Hi", " there", "!"}}}})
		p := mustProvider(t, url)

		var chunks []model.Chunk
		res, err := p.Stream(context.Background(), chatRequest(), collect(&chunks))
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{{Text: "Hi"}, {Text: " there"}, {Text: "!"}}, chunks)
		want, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, want, res, "Stream returns what Complete does")

		reqs := fake.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, true, reqs[0]["stream"])
		delete(reqs[0], "stream")
		assert.Equal(t, reqs[1], reqs[0], "the same request but for stream")
		assert.Equal(t, testKey, fake.Header(0).Get("X-Api-Key"))
		assert.Empty(t, fake.Header(0).Values("Authorization"))
	})
	t.Run("ToolCalls", func(t *testing.T) {
		blocks := []fakeBlock{
			{Text: []string{"Checking."}},
			{ToolID: "toolu_1", ToolName: "get_weather", Input: []string{`{"city"`, `: "Paris"}`}},
			{ToolID: "toolu_2", ToolName: "clock"},
		}
		_, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: blocks})
		p := mustProvider(t, url)
		req := chatRequest()
		req.Tools = []canvas.Function{weather, clock}

		var chunks []model.Chunk
		res, err := p.Stream(context.Background(), req, collect(&chunks))
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{
			{Text: "Checking."},
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "toolu_1", Name: "get_weather"}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"city"`}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `: "Paris"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 1, ID: "toolu_2", Name: "clock"}},
		}, chunks)
		assert.Equal(t, &model.Result{
			Text: "Checking.",
			ToolCalls: []model.ToolCall{
				{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "toolu_2", Name: "clock", Arguments: json.RawMessage(`{}`)},
			},
			Usage: model.Usage{InputTokens: 16, OutputTokens: 7}, Model: "claude-test-20260101", FinishReason: model.FinishToolCalls,
		}, res)
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		for _, tc := range []struct {
			name, schema string
			input        []string
			want         []model.Chunk
			text         string
		}{
			{"Object", `{"type": "object", "properties": {"answer": {"type": "string"}}}`, []string{`{"answer"`, `: "hi"}`},
				[]model.Chunk{{Text: `{"answer"`}, {Text: `: "hi"}`}}, `{"answer": "hi"}`},
			{"NoDeltas", `{"type": "object"}`, nil, []model.Chunk{{Text: `{}`}}, `{}`},
			{"Wrapped", `{"type": "array", "items": {"type": "string"}}`, []string{`{"value": `, `["a"]}`},
				[]model.Chunk{{Text: `["a"]`}}, `["a"]`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, url := newFake(t, &fakeAnthropic{StopReason: "tool_use", Blocks: []fakeBlock{
					{ToolID: "toolu_1", ToolName: "output", Input: tc.input}}})
				req := chatRequest()
				req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(tc.schema)}

				var chunks []model.Chunk
				res, err := mustProvider(t, url).Stream(context.Background(), req, collect(&chunks))
				require.NoError(t, err)
				assert.Equal(t, tc.want, chunks)
				assert.Equal(t, tc.text, res.Text)
				assert.Empty(t, res.ToolCalls)
				assert.Equal(t, "stop", res.FinishReason)
			})
		}
	})
	t.Run("EmitError", func(t *testing.T) {
		_, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"a", "b", "c"}}}})
		stop := errors.New("client went away")
		calls := 0
		_, err := mustProvider(t, url).Stream(context.Background(), chatRequest(), func(model.Chunk) error {
			calls++
			return stop
		})
		assert.Same(t, stop, err)
		assert.Equal(t, 1, calls)
	})
	t.Run("ErrorEvent", func(t *testing.T) {
		for _, tc := range []struct {
			code      string
			status    int
			retryable bool
		}{
			{"overloaded_error", 529, true},
			{"rate_limit_error", 429, true},
			{"api_error", 500, true},
			{"invalid_request_error", 400, false},
			{"something_new", 500, true},
		} {
			t.Run(tc.code, func(t *testing.T) {
				fake, url := newFake(t, &fakeAnthropic{StreamError: tc.code, Blocks: []fakeBlock{{Text: []string{"a", "b"}}}})
				var chunks []model.Chunk
				_, err := mustProvider(t, url).Stream(context.Background(), chatRequest(), collect(&chunks))
				assert.Equal(t, []model.Chunk{{Text: "a"}}, chunks)
				var e *canvas.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, canvas.EPROVIDER, e.Code)
				assert.Contains(t, e.Message, tc.code)
				assert.NotContains(t, e.Message, "secret detail", "the vendor's message stays in the cause")
				var ve *model.VendorError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tc.status, ve.Status)
				assert.Equal(t, tc.code, ve.Code)
				assert.Equal(t, tc.retryable, ve.Retryable())
				assert.Len(t, fake.Requests(), 1)
			})
		}
	})
	t.Run("Cut", func(t *testing.T) {
		_, url := newFake(t, &fakeAnthropic{Cut: true, Blocks: []fakeBlock{{Text: []string{"a", "b"}}}})
		_, err := mustProvider(t, url).Stream(context.Background(), chatRequest(), nil)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Zero(t, ve.Status)
		assert.True(t, ve.Retryable())
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}
