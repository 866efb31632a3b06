package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// toolModel is a model that calls the function get_weather for Paris,
// and once it is given the call's result answers with it. No price of it
// is known. It records every request.
type toolModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

const toolModelName = "toolbot"

func (p *toolModel) Name() string { return toolModelName }

func (p *toolModel) Last() model.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[len(p.reqs)-1]
}

// answer records req and returns the answer to it.
func (p *toolModel) answer(req model.Request) *model.Result {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
		return &model.Result{Text: "It is " + last.Content + ".", Usage: model.Usage{InputTokens: 9, OutputTokens: 3},
			Model: toolModelName, FinishReason: "stop"}
	}
	return &model.Result{ToolCalls: []model.ToolCall{{ID: "call_1", Name: "get_weather",
		Arguments: json.RawMessage(`{"city":"Paris"}`)}}, Usage: model.Usage{InputTokens: 5, OutputTokens: 2},
		Model: toolModelName, FinishReason: model.FinishToolCalls}
}

func (p *toolModel) Complete(_ context.Context, req model.Request) (*model.Result, error) {
	return p.answer(req), nil
}

// Stream sends a call in three pieces: its id and name, then its
// arguments in two halves; a text answer in one piece.
func (p *toolModel) Stream(_ context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	res := p.answer(req)
	chunks := []model.Chunk{{Text: res.Text}}
	if len(res.ToolCalls) > 0 {
		c := res.ToolCalls[0]
		chunks = []model.Chunk{
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: c.ID, Name: c.Name}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"city":`}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `"Paris"}`}},
		}
	}
	for _, ch := range chunks {
		if err := emit(ch); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// mustToolVersion creates, through the API, a version of canvasID on the
// tool model declaring get_weather.
func mustToolVersion(t *testing.T, e *testEnv, canvasID string) string {
	t.Helper()
	return mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{
		"promptId": canvasID,
		"configuration": map[string]any{"model": toolModelName, "toolChoice": "auto", "functions": []any{
			map[string]any{"name": "get_weather", "description": "The weather in a city.", "parameters": map[string]any{
				"type": "object", "required": []string{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
		}},
		"message": map[string]any{"role": "system", "content": "You answer about the weather."},
	})["id"].(string)
}

// toolChunk is one chunk event of a stream with tool calls.
type toolChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
			ToolCall *model.ToolCallDelta `json:"toolCall"`
		} `json:"delta"`
		FinishReason string           `json:"finishReason"`
		ToolCalls    []map[string]any `json:"toolCalls"`
	} `json:"choices"`
	Usage *model.Usage `json:"usage"`
}

var weatherCall = map[string]any{"id": "call_1", "name": "get_weather", "arguments": map[string]any{"city": "Paris"}}

// echoCost is the cost of a run of the echo model, whose price is zero.
var echoCost = map[string]any{"input": 0.0, "output": 0.0, "total": 0.0, "currency": "USD"}

func TestCompletion_Tools(t *testing.T) {
	e := newCompletionEnv(t, false)
	tools := &toolModel{}
	e.Providers.Register(toolModelName, tools)
	c := mustCanvas(t, e.testEnv, mustProjectID(t, e.testEnv, "p"), "weather")
	canvasID := c["id"].(string)
	versionID := mustToolVersion(t, e.testEnv, canvasID)
	body := func(fields map[string]any) map[string]any {
		return merged(map[string]any{"canvas_id": canvasID, "version_id": versionID}, fields)
	}
	ask := []any{map[string]any{"content": "Weather in Paris?"}}

	t.Run("ToolCalls", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"messages": ask}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		choice := got["choices"].([]any)[0].(map[string]any)
		assert.Equal(t, model.FinishToolCalls, choice["finishReason"])
		msg := choice["message"].(map[string]any)
		assert.Equal(t, []any{weatherCall}, msg["toolCalls"])
		assert.Equal(t, "", msg["content"].(map[string]any)["text"])
		assert.Contains(t, got, "cost")
		assert.Nil(t, got["cost"], "no price of the model is known")

		req := tools.Last()
		require.Len(t, req.Tools, 1, "the version's functions reach the model")
		assert.Equal(t, "get_weather", req.Tools[0].Name)
		assert.JSONEq(t, `{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`,
			string(req.Tools[0].Parameters))
		require.NotNil(t, req.ToolChoice)
		assert.Equal(t, canvas.ToolChoiceAuto, req.ToolChoice.Mode)

		run := e.Do(http.MethodGet, completionsPath+"/"+got["id"].(string), e.Viewer, nil).Map(t)
		assert.Equal(t, completion.StatusCompleted, run["status"])
		assert.Contains(t, run, "cost")
		assert.Nil(t, run["cost"])
		result := run["result"].(map[string]any)
		assert.Equal(t, []any{weatherCall},
			result["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["toolCalls"], "the run keeps the calls")
		assert.NotEmpty(t, run["request"].(map[string]any)["tools"], "the run shows the functions it offered")
	})
	t.Run("Stream", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"messages": ask, "stream": true}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		events := sseEvents(t, r.Body)
		require.Len(t, events, 5, "three pieces of the call, the last chunk, [DONE]")
		assert.Equal(t, "[DONE]", events[4].Data)
		var chunks []toolChunk
		for _, ev := range events[:4] {
			assert.Empty(t, ev.Type)
			var c toolChunk
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &c), ev.Data)
			assert.Equal(t, completion.ChunkObject, c.Object)
			require.Len(t, c.Choices, 1)
			chunks = append(chunks, c)
		}
		assert.Equal(t, &model.ToolCallDelta{Index: 0, ID: "call_1", Name: "get_weather"}, chunks[0].Choices[0].Delta.ToolCall)
		var args string
		for _, c := range chunks[:3] {
			require.NotNil(t, c.Choices[0].Delta.ToolCall)
			assert.Empty(t, c.Choices[0].Delta.Content.Text)
			assert.Empty(t, c.Choices[0].FinishReason, "only the last chunk says why the model stopped")
			assert.Nil(t, c.Usage)
			args += c.Choices[0].Delta.ToolCall.Arguments
		}
		assert.JSONEq(t, `{"city":"Paris"}`, args, "the pieces make the arguments")

		last := chunks[3]
		assert.Nil(t, last.Choices[0].Delta.ToolCall)
		assert.Equal(t, model.FinishToolCalls, last.Choices[0].FinishReason)
		assert.Equal(t, []map[string]any{weatherCall}, last.Choices[0].ToolCalls, "the last chunk carries the whole call")
		assert.Equal(t, &model.Usage{InputTokens: 5, OutputTokens: 2}, last.Usage)
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(events[3].Data), &raw))
		assert.Contains(t, raw, "cost")
		assert.Nil(t, raw["cost"], "no price known: null")

		run := e.Do(http.MethodGet, completionsPath+"/"+last.ID, e.Viewer, nil).Map(t)
		result := run["result"].(map[string]any)
		assert.Equal(t, []any{weatherCall},
			result["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["toolCalls"])
	})
	t.Run("ToolResult", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"messages": []any{
			map[string]any{"content": "Weather in Paris?"},
			map[string]any{"role": "assistant", "toolCalls": []any{weatherCall}},
			map[string]any{"role": "tool", "toolCallId": "call_1", "content": "21°C and sunny"},
		}}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "It is 21°C and sunny.", completionText(t, got))
		assert.Equal(t, "stop", got["choices"].([]any)[0].(map[string]any)["finishReason"])

		type sent struct {
			Role, Content, ToolCallID string
			ToolCalls                 []model.ToolCall
		}
		var msgs []sent
		for _, m := range tools.Last().Messages {
			msgs = append(msgs, sent{m.Role, m.Content, m.ToolCallID, m.ToolCalls})
		}
		assert.Equal(t, []sent{
			{Role: canvas.RoleSystem, Content: "You answer about the weather."},
			{Role: canvas.RoleUser, Content: "Weather in Paris?"},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "get_weather",
				Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: model.RoleTool, Content: "21°C and sunny", ToolCallID: "call_1"},
		}, msgs, "the version's messages, then the request's in order, with their roles")
	})
	t.Run("MixedMessagesKeepOrder", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"messages": []any{
			map[string]any{"content": "one"},
			map[string]any{"role": "system", "content": "two"},
			map[string]any{"content": "three"},
			map[string]any{"role": "assistant", "content": "four"},
			map[string]any{"role": "user", "content": "five"},
		}}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var got [][2]string
		for _, m := range tools.Last().Messages[1:] {
			got = append(got, [2]string{m.Role, m.Content})
		}
		assert.Equal(t, [][2]string{{"user", "one"}, {"system", "two"}, {"user", "three"}, {"assistant", "four"},
			{"user", "five"}}, got)
	})
	t.Run("MessagesValidation", func(t *testing.T) {
		for name, tc := range map[string]struct {
			msg  map[string]any
			path string
		}{
			"ToolWithoutCallID":    {map[string]any{"role": "tool", "content": "x"}, "/json/messages/0/toolCallId"},
			"ToolWithoutContent":   {map[string]any{"role": "tool", "toolCallId": "call_1"}, "/json/messages/0/content"},
			"AssistantEmpty":       {map[string]any{"role": "assistant"}, "/json/messages/0/content"},
			"UserWithToolCalls":    {map[string]any{"content": "x", "toolCalls": []any{weatherCall}}, "/json/messages/0/toolCalls"},
			"UserWithToolCallID":   {map[string]any{"content": "x", "toolCallId": "call_1"}, "/json/messages/0/toolCallId"},
			"ArgumentsNotAnObject": {map[string]any{"role": "assistant", "toolCalls": []any{map[string]any{"id": "c", "name": "f", "arguments": "{}"}}}, "/json/messages/0/toolCalls/0/arguments"},
			"UnknownRole":          {map[string]any{"role": "bot", "content": "x"}, "/json/messages/0/role"},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"messages": []any{tc.msg}}))
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
				b := readError(t, r)
				require.Len(t, b.Details, 1, "%+v", b.Details)
				assert.Equal(t, tc.path, b.Details[0].Path)
			})
		}
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"settings": map[string]any{"credentialId": "key"}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, "/json/settings/credentialId", readError(t, r).Details[0].Path)
	})
	t.Run("EchoCost", func(t *testing.T) {
		ec := mustEnvCanvas(t, e.testEnv, 1)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"version_id": ec.Versions[0].ID, "variables": map[string]any{"name": "Ada"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, echoCost, got["cost"], "echo's price is zero")
		run := e.Do(http.MethodGet, completionsPath+"/"+got["id"].(string), e.Viewer, nil).Map(t)
		assert.Equal(t, echoCost, run["cost"])
		assert.NotContains(t, run, "credentialId", "the server's own back end answered")
		assert.NotContains(t, run, "provider")

		r = e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"version_id": ec.Versions[0].ID, "variables": map[string]any{"name": "Ada"}, "stream": true})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		events := sseEvents(t, r.Body)
		require.GreaterOrEqual(t, len(events), 2)
		var final map[string]any
		require.NoError(t, json.Unmarshal([]byte(events[len(events)-2].Data), &final))
		assert.Equal(t, echoCost, final["cost"])
		assert.Equal(t, "stop", final["choices"].([]any)[0].(map[string]any)["finishReason"])
	})
}

func TestCompletion_ListTotals(t *testing.T) {
	e := newCompletionEnv(t, false)
	e.Providers.Register(toolModelName, &toolModel{})
	ec := mustEnvCanvas(t, e.testEnv, 1)
	toolVersion := mustToolVersion(t, e.testEnv, ec.Canvas.ID)
	other := mustEnvCanvas(t, e.testEnv, 1)
	runOn := func(canvasID, versionID string) {
		t.Helper()
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": canvasID,
			"version_id": versionID, "variables": map[string]any{"name": "Ada"}, "messages": []any{map[string]any{"content": "hi"}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	runOn(ec.Canvas.ID, ec.Versions[0].ID)
	runOn(ec.Canvas.ID, toolVersion)
	runOn(ec.Canvas.ID, toolVersion)
	runOn(other.Canvas.ID, other.Versions[0].ID)

	t.Run("ByCanvasAndVersion", func(t *testing.T) {
		r := e.Do(http.MethodGet, completionsPath+"?canvasId="+ec.Canvas.ID+"&limit=1&totals=true", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		page := r.Map(t)
		assert.Len(t, page["data"], 1, "one page of runs")
		totals := page["totals"].(map[string]any)
		assert.Equal(t, 3.0, totals["count"], "the totals of every run of the filter")
		assert.Equal(t, 2.0, totals["unpriced"], "the tool model has no price")
		assert.Equal(t, echoCost, totals["cost"], "the sum of the known costs")
		assert.Equal(t, 2.0, totals["groupCount"])
		groups := totals["groups"].([]any)
		require.Len(t, groups, 2)
		first, second := groups[0].(map[string]any), groups[1].(map[string]any)
		assert.Equal(t, ec.Canvas.ID, first["canvasId"])
		assert.Equal(t, toolVersion, first["versionId"], "the version with the most runs first")
		assert.Equal(t, 2.0, first["count"])
		assert.Equal(t, 10.0, first["inputTokens"])
		assert.Equal(t, 4.0, first["outputTokens"])
		assert.Nil(t, first["cost"])
		assert.Equal(t, ec.Versions[0].ID, second["versionId"])
		assert.Equal(t, 1.0, second["count"])
		assert.Equal(t, echoCost, second["cost"])
		assert.Equal(t, 0.0, second["unpriced"])
	})
	t.Run("Workspace", func(t *testing.T) {
		r := e.Do(http.MethodGet, completionsPath+"?totals=true", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		totals := r.Map(t)["totals"].(map[string]any)
		assert.Equal(t, 4.0, totals["count"])
		assert.Equal(t, 3.0, totals["groupCount"])
	})
	t.Run("NotAsked", func(t *testing.T) {
		r := e.Do(http.MethodGet, completionsPath, e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.NotContains(t, r.Map(t), "totals")
	})
	t.Run("Tasks", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi"})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		r = e.Do(http.MethodGet, "/v1/tasks?totals=true", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		totals := r.Map(t)["totals"].(map[string]any)
		assert.Equal(t, 1.0, totals["count"])
		assert.Equal(t, 0.0, totals["unpriced"], "a queued task is not unpriced")
		group := totals["groups"].([]any)[0].(map[string]any)
		assert.NotContains(t, group, "canvasId", "tasks belong to no canvas")
	})
	t.Run("Validation", func(t *testing.T) {
		r := e.Do(http.MethodGet, completionsPath+"?totals=maybe", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, "/query/totals", readError(t, r).Details[0].Path)
	})
}

// TestGeneration_Cost: a generation records what its run cost, null when
// no price of the model is known.
func TestGeneration_Cost(t *testing.T) {
	ge := newGenerationEnv(t)
	ge.Providers.Register(toolModelName, &toolModel{})
	ge.StartWorker(t, queue.WorkerOptions{})
	ec := mustEnvCanvas(t, ge.testEnv, 1)
	tc := ge.mustTestCase(t, ec.Canvas.ID, nil)
	for name, want := range map[string]any{"echo": echoCost, toolModelName: nil} {
		t.Run(name, func(t *testing.T) {
			v := ge.mustVersion(t, ec, name, "Weather for {{name}}?")
			g := ge.waitGeneration(t, ge.runOne(t, tc.ID, v.ID)["generationId"].(string))
			assert.Equal(t, testcase.GenerationCompleted, g["status"])
			assert.Contains(t, g, "cost")
			assert.Equal(t, want, g["cost"])
		})
	}
}
