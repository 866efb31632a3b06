package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// echoTools are the functions the echo tool tests declare.
var echoTools = []canvas.Function{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type": "object",
		"properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
		"required": ["city", "days", "unit"]}`)},
	{Name: "get", Parameters: json.RawMessage(`{"type": "object", "properties": {"all": {"type": ["null", "boolean"]},
		"ids": {"type": "array"}, "filter": {"type": "object"}, "score": {"type": "number"}, "kind": {"const": "x"}, "any": {}},
		"required": ["all", "ids", "filter", "score", "kind", "any"]}`)},
	{Name: "now"},
}

func choice(mode, name string) *canvas.ToolChoice { return &canvas.ToolChoice{Mode: mode, Name: name} }

func TestEcho_ToolCall(t *testing.T) {
	tests := []struct {
		name   string
		tools  []canvas.Function
		choice *canvas.ToolChoice
		msgs   []model.Message
		// call is the function echo calls with args; "" answers text.
		call, args string
	}{
		{name: "CallWithArguments", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: `Please call get_weather with {"city": "Paris", "days": 2} now.`}},
			call: "get_weather", args: `{"city":"Paris","days":2}`},
		{name: "CallCapitalized", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "Call\tnow."}},
			call: "now", args: `{}`},
		{name: "CallWithoutArguments", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call get_weather"}},
			call: "get_weather", args: `{"city":"","days":0,"unit":"celsius"}`},
		{name: "ZeroValues", tools: echoTools, choice: choice(canvas.ToolChoiceAuto, ""),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call get {not json} {\"ids\": [1]"}},
			call: "get", args: `{"all":false,"any":null,"filter":{},"ids":[],"kind":"x","score":0}`},
		{name: "ObjectOnly", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: `call now [1, 2] "x" {"at": {"tz": "UTC"}} {"b": 1}`}},
			call: "now", args: `{"at":{"tz":"UTC"}}`},
		{name: "FirstAsked", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: `call now, then call get_weather {"city": "Oslo"}`}},
			call: "now", args: `{"city":"Oslo"}`},
		{name: "LastUserMessage", tools: echoTools,
			msgs: []model.Message{
				{Role: canvas.RoleUser, Content: "call now"},
				{Role: canvas.RoleUser, Content: "call get_weather"},
				{Role: canvas.RoleAssistant, Content: "call get"},
			},
			call: "get_weather", args: `{"city":"","days":0,"unit":"celsius"}`},
		{name: "WholeWordsOnly", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "recall now; call get_weathers; call nowhere; call get-it; callnow"}}},
		{name: "NotDeclared", tools: echoTools,
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call send_mail"}}},
		{name: "NoTools",
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call now"}}},
		{name: "ChoiceNone", tools: echoTools, choice: choice(canvas.ToolChoiceNone, ""),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call now"}}},
		{name: "Required", tools: echoTools, choice: choice(canvas.ToolChoiceRequired, ""),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "Weather?"}},
			call: "get_weather", args: `{"city":"","days":0,"unit":"celsius"}`},
		{name: "RequiredAsked", tools: echoTools, choice: choice(canvas.ToolChoiceRequired, ""),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "call now"}},
			call: "now", args: `{}`},
		{name: "RequiredNameMentioned", tools: echoTools, choice: choice(canvas.ToolChoiceRequired, ""),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: `{"x": 1} get_weather {"city": "Rome"}`}},
			call: "get_weather", args: `{"city":"Rome"}`},
		{name: "Named", tools: echoTools, choice: choice(canvas.ToolChoiceFunction, "get"),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: `call now; get {"ids": [3]}`}},
			call: "get", args: `{"ids":[3]}`},
		{name: "NamedNotDeclared", tools: echoTools, choice: choice(canvas.ToolChoiceFunction, "send_mail"),
			msgs: []model.Message{{Role: canvas.RoleUser, Content: "send_mail"}}},
		{name: "NoUserMessage", tools: echoTools, choice: choice(canvas.ToolChoiceRequired, ""),
			msgs: []model.Message{{Role: canvas.RoleSystem, Content: `now {"a": 1}`}},
			call: "get_weather", args: `{"city":"","days":0,"unit":"celsius"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := model.Request{Model: "echo", Messages: tt.msgs, Tools: tt.tools, ToolChoice: tt.choice}
			res, err := model.NewEcho(model.EchoOptions{}).Complete(context.Background(), req)
			require.NoError(t, err)
			if tt.call == "" {
				assert.Empty(t, res.ToolCalls)
				assert.Equal(t, "stop", res.FinishReason)
				assert.Equal(t, tt.msgs[len(tt.msgs)-1].Content, res.Text, "the echo answer")
				return
			}
			assert.Equal(t, &model.Result{
				ToolCalls: []model.ToolCall{{ID: "call_echo_0", Name: tt.call, Arguments: json.RawMessage(tt.args)}},
				Usage:     model.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: 2},
				Model:     "echo", FinishReason: "tool_calls",
			}, res)
		})
	}
}

func TestEcho_StreamToolCall(t *testing.T) {
	req := model.Request{Tools: echoTools, Messages: []model.Message{
		{Role: canvas.RoleSystem, Content: "You check the weather."},
		{Role: canvas.RoleUser, Content: `call get_weather {"city": "Paris"}`},
	}}
	t.Run("OK", func(t *testing.T) {
		var got []model.Chunk
		res, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), req, func(c model.Chunk) error {
			got = append(got, c)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "call_echo_0", Name: "get_weather"}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"city":"Paris"}`}},
		}, got)
		assert.Equal(t, &model.Result{
			ToolCalls: []model.ToolCall{{ID: "call_echo_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
			Usage:     model.Usage{InputTokens: 8, OutputTokens: 2}, Model: "echo", FinishReason: "tool_calls",
		}, res)

		completed, err := model.NewEcho(model.EchoOptions{}).Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, completed, res)
	})
	t.Run("EmitError", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		_, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), req, func(model.Chunk) error {
			n++
			return stop
		})
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, 1, n)
	})
}

func TestEcho_ToolResults(t *testing.T) {
	call := []model.ToolCall{
		{ID: "call_echo_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "call_2", Name: "now", Arguments: json.RawMessage(`{}`)},
	}
	tests := []struct {
		name   string
		choice *canvas.ToolChoice
		msgs   []model.Message
		want   string
	}{
		{name: "One", msgs: []model.Message{
			{Role: canvas.RoleUser, Content: "call get_weather"},
			{Role: canvas.RoleAssistant, ToolCalls: call[:1]},
			{Role: model.RoleTool, ToolCallID: "call_echo_0", Content: `{"temp": 21}`},
		}, want: `get_weather returned: {"temp": 21}`},
		{name: "SeveralEvenWhenRequired", choice: choice(canvas.ToolChoiceRequired, ""), msgs: []model.Message{
			{Role: canvas.RoleUser, Content: "call get_weather"},
			{Role: canvas.RoleAssistant, ToolCalls: call},
			{Role: model.RoleTool, ToolCallID: "call_echo_0", Content: "sunny"},
			{Role: model.RoleTool, ToolCallID: "call_2", Content: "noon"},
		}, want: "get_weather returned: sunny\nnow returned: noon"},
		{name: "UnknownCall", msgs: []model.Message{
			{Role: model.RoleTool, ToolCallID: "call_9", Content: "42"},
		}, want: "call_9 returned: 42"},
		{name: "NotLast", msgs: []model.Message{
			{Role: canvas.RoleAssistant, ToolCalls: call[:1]},
			{Role: model.RoleTool, ToolCallID: "call_echo_0", Content: "sunny"},
			{Role: canvas.RoleUser, Content: "Thanks."},
		}, want: "\nsunny\nThanks."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := model.Request{Messages: tt.msgs, Tools: echoTools, ToolChoice: tt.choice}
			var chunks []string
			res, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), req, func(c model.Chunk) error {
				chunks = append(chunks, c.Text)
				return nil
			})
			require.NoError(t, err)
			assert.Empty(t, res.ToolCalls)
			assert.Equal(t, "stop", res.FinishReason)
			assert.Equal(t, tt.want, res.Text)
			assert.Equal(t, len(chunks), res.Usage.OutputTokens)
		})
	}
}
