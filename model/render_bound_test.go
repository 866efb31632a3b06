package model_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// TestRenderMax checks that a value repeated by many placeholders is
// refused once the rendering would pass the bound, before it is written:
// a 1 MB value 1,000 times would otherwise render 1 GB.
func TestRenderMax(t *testing.T) {
	content := strings.Repeat("{{a}} ", 1000)
	msgs := []canvas.Message{{Role: canvas.RoleUser, Content: content}}
	big := strings.Repeat("x", 1<<20)

	t.Run("Default", func(t *testing.T) {
		_, err := model.Render(msgs, nil, map[string]any{"a": big})
		require.Error(t, err)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
		assert.Equal(t, []canvas.Detail{{Path: "/json/variables/a", Message: "renders past the 4194304-byte bound"}},
			canvas.ErrorDetails(err))
	})
	t.Run("AcrossMessages", func(t *testing.T) {
		two := []canvas.Message{{Content: "{{b}}", Index: 0}, {Content: "{{b}}", Index: 1}}
		_, err := model.RenderMax(two, nil, map[string]any{"b": strings.Repeat("y", 600)}, 1000)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err), "the bound holds for the messages together")
		out, err := model.RenderMax(two, nil, map[string]any{"b": strings.Repeat("y", 500)}, 1000)
		require.NoError(t, err)
		assert.Len(t, out, 2)
	})
	t.Run("JSONValue", func(t *testing.T) {
		defs := []canvas.Variable{{Name: "j", Type: canvas.VariableJSON}}
		many := []canvas.Message{{Content: strings.Repeat("{{j}}", 1000)}}
		_, err := model.RenderMax(many, defs, map[string]any{"j": []any{strings.Repeat("z", 100)}}, 10_000)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
	})
	t.Run("WithinBound", func(t *testing.T) {
		out, err := model.RenderMax(msgs, nil, map[string]any{"a": "ok"}, 0)
		require.NoError(t, err)
		assert.Equal(t, strings.Repeat("ok ", 1000), out[0].Content)
	})
}

// TestCaller_PromptBound checks that the bound of a prompt holds for the
// messages a caller sends, whatever made them large.
func TestCaller_PromptBound(t *testing.T) {
	c := model.NewCaller(model.Options{MaxPromptBytes: 100})
	assert.Equal(t, 100, c.MaxPromptBytes())
	assert.Equal(t, model.DefaultMaxRenderBytes, model.NewCaller(model.Options{}).MaxPromptBytes())
}
