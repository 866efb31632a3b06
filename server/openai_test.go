package server_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// openAIClient returns the official OpenAI client pointed at the server's
// OpenAI-compatible entry point with token, without retries and without
// reading OPENAI_* variables.
func openAIClient(e *testEnv, token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(e.URL+"/openai/v1/"), option.WithAPIKey(token),
		option.WithMaxRetries(0), option.WithHTTPClient(http.DefaultClient))
}

// TestOpenAI_SDKRoundTrip runs canvases through the official openai-go
// client: sync and streamed, with variables, with each kind of target, and
// reads the run it made through the API.
func TestOpenAI_SDKRoundTrip(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	ctx := context.Background()
	c := openAIClient(e.testEnv, e.Editor)
	vars := option.WithJSONSet("prompt_variables", map[string]any{"name": "Ada"})
	params := func(target string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: "canvas:" + w.Canvas + target,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How are you?")}}
	}

	t.Run("Sync", func(t *testing.T) {
		res, err := c.Chat.Completions.New(ctx, params(""), vars)
		require.NoError(t, err)
		assert.Equal(t, "chat.completion", string(res.Object))
		require.Len(t, res.Choices, 1)
		assert.Equal(t, "stop", res.Choices[0].FinishReason)
		assert.Contains(t, res.Choices[0].Message.Content, "Hello Ada", "the version's message, rendered, reaches the model")
		assert.Contains(t, res.Choices[0].Message.Content, "How are you?", "the request's message follows it")
		assert.Equal(t, res.Usage.PromptTokens+res.Usage.CompletionTokens, res.Usage.TotalTokens)
		assert.Positive(t, res.Usage.TotalTokens)

		run := e.Do(http.MethodGet, "/v2/chat/completions/"+res.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		got := run.Map(t)
		assert.Equal(t, "completed", got["status"], "the answer's id is the run's")
		assert.Equal(t, w.Version, got["versionId"])
		assert.Equal(t, "production", got["environmentName"])
		assert.Equal(t, echoCost, got["cost"], "the run is priced")
	})
	t.Run("Streamed", func(t *testing.T) {
		p := params("@production")
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := c.Chat.Completions.NewStreaming(ctx, p, vars)
		acc := openai.ChatCompletionAccumulator{}
		chunks := 0
		for stream.Next() {
			chunk := stream.Current()
			assert.Equal(t, "chat.completion.chunk", string(chunk.Object))
			acc.AddChunk(chunk)
			chunks++
		}
		require.NoError(t, stream.Err())
		assert.Greater(t, chunks, 2, "pieces, the finish and the usage")
		require.Len(t, acc.Choices, 1)
		assert.Contains(t, acc.Choices[0].Message.Content, "Hello Ada")
		assert.Equal(t, "stop", acc.Choices[0].FinishReason)
		assert.Positive(t, acc.Usage.TotalTokens, "include_usage sends the usage")

		run := e.Do(http.MethodGet, "/v2/chat/completions/"+acc.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		assert.Equal(t, acc.Choices[0].Message.Content, run.Map(t)["result"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(map[string]any)["text"])
	})
	t.Run("Targets", func(t *testing.T) {
		draft := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": w.Canvas,
			"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Draft for {{name}}"}})
		number := draft["versionIndex"].(float64)
		for name, target := range map[string]string{
			"Number": "@v" + strconv.Itoa(int(number)), "ID": "@" + draft["id"].(string),
		} {
			t.Run(name, func(t *testing.T) {
				res, err := c.Chat.Completions.New(ctx, params(target), vars)
				require.NoError(t, err)
				assert.Contains(t, res.Choices[0].Message.Content, "Draft for Ada")
			})
		}
		res, err := c.Chat.Completions.New(ctx, params("@v1"), vars)
		require.NoError(t, err)
		assert.Contains(t, res.Choices[0].Message.Content, "Hello Ada", "v1 is the world's first version")
	})
	t.Run("Models", func(t *testing.T) {
		page, err := c.Models.List(ctx)
		require.NoError(t, err)
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		assert.Contains(t, ids, "canvas:"+w.Canvas)
	})
	t.Run("Errors", func(t *testing.T) {
		tests := []struct {
			name   string
			params openai.ChatCompletionNewParams
			token  string
			status int
			code   string
		}{
			{"NotACanvas", openai.ChatCompletionNewParams{Model: "gpt-4o",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}, e.Editor, 422, canvas.EINVALID},
			{"UnknownVersion", params("@v99"), e.Editor, 404, canvas.ENOTFOUND},
			{"UnknownEnvironment", params("@nowhere"), e.Editor, 404, canvas.ENOTFOUND},
			{"Viewer", params(""), e.Viewer, 403, canvas.EFORBIDDEN},
			{"UnknownParameter", func() openai.ChatCompletionNewParams {
				p := params("")
				p.Seed = openai.Int(7)
				return p
			}(), e.Editor, 422, canvas.EINVALID},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				client := openAIClient(e.testEnv, tt.token)
				_, err := client.Chat.Completions.New(ctx, tt.params, vars)
				var apiErr *openai.Error
				require.True(t, errors.As(err, &apiErr), "%v", err)
				assert.Equal(t, tt.status, apiErr.StatusCode)
				assert.Equal(t, tt.code, apiErr.Code, "the SDK reads the error body's code")
				assert.NotEmpty(t, apiErr.Message)
			})
		}
	})
}

// TestOpenAI_ToolCalls runs the tool loop through the official client: the
// answer's tool calls in OpenAI's shape, sync and streamed, then the
// assistant's calls and the tool's result sent back.
func TestOpenAI_ToolCalls(t *testing.T) {
	e := newCompletionEnv(t, false)
	tools := &toolModel{}
	e.Providers.Register(toolModelName, tools)
	canvasID := mustCanvas(t, e.testEnv, mustProjectID(t, e.testEnv, "p"), "weather")["id"].(string)
	versionID := mustToolVersion(t, e.testEnv, canvasID)
	ctx := context.Background()
	c := openAIClient(e.testEnv, e.Editor)
	ask := openai.ChatCompletionNewParams{Model: "canvas:" + canvasID + "@" + versionID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}

	res, err := c.Chat.Completions.New(ctx, ask)
	require.NoError(t, err)
	choice := res.Choices[0]
	assert.Equal(t, "tool_calls", choice.FinishReason)
	require.Len(t, choice.Message.ToolCalls, 1)
	call := choice.Message.ToolCalls[0]
	assert.Equal(t, "call_1", call.ID)
	assert.Equal(t, "function", call.Type)
	assert.Equal(t, "get_weather", call.Function.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.Function.Arguments)
	assert.Equal(t, toolModelName, res.Model, "the model that answered")

	t.Run("Streamed", func(t *testing.T) {
		stream := c.Chat.Completions.NewStreaming(ctx, ask)
		acc := openai.ChatCompletionAccumulator{}
		finished := false
		for stream.Next() {
			acc.AddChunk(stream.Current())
			if tc, ok := acc.JustFinishedToolCall(); ok {
				finished = true
				assert.Equal(t, "get_weather", tc.Name)
				assert.JSONEq(t, `{"city":"Paris"}`, tc.Arguments)
			}
		}
		require.NoError(t, stream.Err())
		assert.True(t, finished, "the accumulator saw the whole call")
		require.Len(t, acc.Choices, 1)
		assert.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
		require.Len(t, acc.Choices[0].Message.ToolCalls, 1)
		assert.Equal(t, "call_1", acc.Choices[0].Message.ToolCalls[0].ID)
	})
	t.Run("ToolResult", func(t *testing.T) {
		next := ask
		next.Messages = append(next.Messages, choice.Message.ToParam(), openai.ToolMessage("sunny", call.ID))
		res, err := c.Chat.Completions.New(ctx, next)
		require.NoError(t, err)
		assert.Equal(t, "It is sunny.", res.Choices[0].Message.Content)
		assert.Equal(t, "stop", res.Choices[0].FinishReason)
		req := tools.Last()
		n := len(req.Messages)
		require.GreaterOrEqual(t, n, 3)
		assert.Equal(t, model.RoleTool, req.Messages[n-1].Role)
		assert.Equal(t, "call_1", req.Messages[n-1].ToolCallID)
		require.Len(t, req.Messages[n-2].ToolCalls, 1, "the assistant's call reaches the model")
		assert.JSONEq(t, `{"city":"Paris"}`, string(req.Messages[n-2].ToolCalls[0].Arguments))
	})
}

// TestOpenAI_Validation checks the body rules of the entry point that the
// SDK cannot send wrong: each problem at its pointer.
func TestOpenAI_Validation(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	model := "canvas:" + w.Canvas
	tests := []struct {
		name string
		body map[string]any
		path string
	}{
		{"ModelMissingID", map[string]any{"model": "canvas:", "messages": []any{}}, "/json/model"},
		{"ModelEmptyTarget", map[string]any{"model": model + "@", "messages": []any{}}, "/json/model"},
		{"ImagePart", map[string]any{"model": model, "messages": []any{map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "image_url", "text": ""}}}}}, "/json/messages/0/content/0/type"},
		{"Misspelled", map[string]any{"model": model, "messages": []any{}, "temprature": 1}, "/json/temprature"},
		{"TargetWithApplication", map[string]any{"model": model + "@production", "messages": []any{},
			"application_id": w.App}, "/json/model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireInvalidAt(t, e.Do(http.MethodPost, "/openai/v1/chat/completions", e.Editor, tt.body), tt.path)
		})
	}
	t.Run("Application", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/openai/v1/chat/completions", e.Editor, map[string]any{"model": model,
			"messages":         []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}}},
			"prompt_variables": map[string]any{"name": "Ada"}, "application_id": w.App})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)
		run := e.Do(http.MethodGet, "/v2/chat/completions/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		assert.Equal(t, w.App, run.Map(t)["applicationId"])
		var deliveries deliveryPage
		page := e.Do(http.MethodGet, "/webhooks/deliveries?applicationId="+w.App, e.Admin, nil)
		require.Equal(t, http.StatusOK, page.Status, "%s", page.Body)
		page.JSON(t, &deliveries)
		assert.Len(t, deliveries.Data, 2, "the run notifies the application, as any completion does")
	})
}
