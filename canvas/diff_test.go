package canvas_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

func TestDiff(t *testing.T) {
	temp, hot := 0.2, 0.9
	md := "**Hi**"
	before := &canvas.Version{ID: "a",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "Hello {{name}}"},
			{Role: canvas.RoleUser, Content: "Same", Index: 1}, {Role: canvas.RoleUser, Content: "Gone", Index: 2}},
		Variables: []canvas.Variable{{Name: "name", Type: canvas.VariableText}, {Name: "old", Type: canvas.VariableText}},
		Configuration: canvas.Configuration{Model: "gpt-4o", Temperature: &temp,
			Extra: map[string]json.RawMessage{"stop": json.RawMessage(`["a","b"]`)}}}
	after := &canvas.Version{ID: "b",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "Bonjour {{name}}", MarkdownContent: &md},
			{Role: canvas.RoleUser, Content: "Same", Index: 1}},
		Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}, {Name: "tone", Type: canvas.VariableText}},
		Configuration: canvas.Configuration{Model: "gpt-4o", Temperature: &hot, Extra: map[string]json.RawMessage{"stop": json.RawMessage(`["a"]`)}}}

	d, err := canvas.Diff(before, after)
	require.NoError(t, err)
	assert.False(t, d.Identical)
	assert.Equal(t, "b", d.VersionID)
	assert.Equal(t, "a", d.AgainstID)
	require.Len(t, d.Messages, 2)
	assert.Equal(t, 0, d.Messages[0].Index)
	assert.Equal(t, canvas.ChangeChanged, d.Messages[0].Change)
	assert.Equal(t, "Hello {{name}}", d.Messages[0].Before.Content)
	assert.Equal(t, "Bonjour {{name}}", d.Messages[0].After.Content)
	assert.Equal(t, &md, d.Messages[0].After.MarkdownContent)
	assert.Equal(t, canvas.MessageChange{Index: 2, Change: canvas.ChangeRemoved,
		Before: &canvas.MessageFields{Role: canvas.RoleUser, Content: "Gone", Index: 2}}, d.Messages[1])

	assert.Equal(t, []canvas.VariableDiff{
		{Name: "name", Change: canvas.ChangeChanged, Before: &before.Variables[0], After: &after.Variables[0]},
		{Name: "tone", Change: canvas.ChangeAdded, After: &after.Variables[1]},
		{Name: "old", Change: canvas.ChangeRemoved, Before: &before.Variables[1]},
	}, d.Variables)

	assert.Equal(t, []canvas.ValueChange{
		{Path: "/stop/1", Change: canvas.ChangeRemoved, Before: json.RawMessage(`"b"`), After: nil},
		{Path: "/temperature", Change: canvas.ChangeChanged, Before: json.RawMessage(`0.2`), After: json.RawMessage(`0.9`)},
	}, d.Configuration)

	same, err := canvas.Diff(before, before)
	require.NoError(t, err)
	assert.True(t, same.Identical)
	assert.Empty(t, same.Messages)
	assert.Empty(t, same.Variables)
	assert.Empty(t, same.Configuration)
}
