package model_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// echoRequest renders a version and appends the request's own messages, the
// way a completion reaches the echo model.
func echoRequest(t *testing.T) model.Request {
	t.Helper()
	msgs := []canvas.Message{
		{Role: canvas.RoleSystem, Content: "Write about {{ topic }}.", Index: 0},
		{Role: canvas.RoleAssistant, Content: "Which aspect of {{topic}}?", Index: 1},
	}
	rendered, err := model.Render(msgs, []canvas.Variable{text("topic", true)}, map[string]any{"topic": "owls"})
	require.NoError(t, err)
	return model.Request{
		Model:    model.EchoModel,
		Messages: model.WithUserMessages(rendered, "Their  eyes.", "And {{topic}} calls."),
	}
}

func TestEcho_Stream(t *testing.T) {
	const want = "Write about owls.\nWhich aspect of owls?\nTheir  eyes.\nAnd {{topic}} calls."

	t.Run("OK", func(t *testing.T) {
		var chunks []string
		res, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), echoRequest(t), func(c model.Chunk) error {
			chunks = append(chunks, c.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []string{
			"Write", " about", " owls.", "\nWhich", " aspect", " of", " owls?", "\nTheir", "  eyes.", "\nAnd", " {{topic}}", " calls.",
		}, chunks)
		assert.Equal(t, want, strings.Join(chunks, ""))
		assert.Equal(t, &model.Result{
			Text: want, Usage: model.Usage{InputTokens: 12, OutputTokens: 12}, Model: "echo", FinishReason: "stop",
		}, res)
	})
	t.Run("Deterministic", func(t *testing.T) {
		e := model.NewEcho(model.EchoOptions{})
		first, err := e.Complete(context.Background(), echoRequest(t))
		require.NoError(t, err)
		second, err := e.Complete(context.Background(), echoRequest(t))
		require.NoError(t, err)
		assert.Equal(t, first, second)
		assert.Equal(t, want, first.Text)
	})
	t.Run("Empty", func(t *testing.T) {
		n := 0
		res, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), model.Request{}, func(model.Chunk) error {
			n++
			return nil
		})
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, &model.Result{Model: "echo", FinishReason: "stop"}, res)
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var chunks []string
		_, err := model.NewEcho(model.EchoOptions{Delay: time.Hour}).Stream(ctx, echoRequest(t), func(c model.Chunk) error {
			chunks = append(chunks, c.Text)
			cancel()
			return nil
		})
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []string{"Write"}, chunks)
	})
	t.Run("CancelledBeforeStart", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := model.NewEcho(model.EchoOptions{}).Complete(ctx, echoRequest(t))
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("EmitError", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		_, err := model.NewEcho(model.EchoOptions{}).Stream(context.Background(), echoRequest(t), func(model.Chunk) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		assert.ErrorIs(t, err, stop)
		assert.Equal(t, 3, n)
	})
}

func TestRegistry_Resolve(t *testing.T) {
	// Three providers, told apart by identity.
	echo := model.NewEcho(model.EchoOptions{})
	openai := model.NewEcho(model.EchoOptions{})
	local := model.NewEcho(model.EchoOptions{})

	r := model.NewRegistry(echo)
	r.RegisterPrefix("gpt-", openai)
	r.RegisterPrefix("gpt-oss", local)

	tests := []struct {
		model string
		want  model.Provider
	}{
		{"echo", echo},
		{"gpt-4o", openai},
		{"gpt-oss:20b", local},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.model)
		require.NoError(t, err, tt.model)
		assert.Same(t, tt.want, got, tt.model)
	}

	t.Run("NotFound", func(t *testing.T) {
		_, err := r.Resolve("llama3")
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Equal(t, `No model provider serves model "llama3".`, canvas.ErrorMessage(err))
	})
	t.Run("Fallback", func(t *testing.T) {
		var r model.Registry
		r.RegisterPrefix("", local)
		r.Register("echo", echo)
		got, err := r.Resolve("llama3")
		require.NoError(t, err)
		assert.Same(t, local, got)
		got, err = r.Resolve("echo")
		require.NoError(t, err)
		assert.Same(t, echo, got)
	})
	t.Run("Replace", func(t *testing.T) {
		r := model.NewRegistry(echo)
		other := model.NewEcho(model.EchoOptions{Delay: time.Millisecond})
		r.Register("echo", other)
		got, err := r.Resolve("echo")
		require.NoError(t, err)
		assert.Same(t, other, got)
	})
}
