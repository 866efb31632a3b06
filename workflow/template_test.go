package workflow_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/workflow"
)

func TestScope(t *testing.T) {
	in := &workflow.StepInput{
		Variables: map[string]any{"topic": "owls", "steps.a.status": "shadowed"},
		Steps: map[string]*workflow.Step{
			"a": endedStep("a", workflow.StepCompleted, `{"title": "T", "n": 2.50}`),
			"b": endedStep("b", workflow.StepSkipped, ""),
			"c": endedStep("c", workflow.StepCompleted, `[1, 2]`),
		},
	}
	assert.Equal(t, map[string]any{
		"topic":                "owls",
		"steps.a.status":       "completed",
		"steps.a.output":       map[string]any{"title": "T", "n": json.Number("2.50")},
		"steps.a.output.title": "T",
		"steps.a.output.n":     json.Number("2.50"),
		"steps.b.status":       "skipped",
		"steps.b.output":       nil,
		"steps.c.status":       "completed",
		"steps.c.output":       []any{json.Number("1"), json.Number("2")},
	}, workflow.Scope(in))
}

// ExampleScope shows the values a step's templates read.
func ExampleScope() {
	in := &workflow.StepInput{
		Variables: map[string]any{"topic": "owls"},
		Steps: map[string]*workflow.Step{
			"draft": {ID: "draft", Status: workflow.StepCompleted, Output: json.RawMessage(`{"title": "Night birds"}`)},
		},
	}
	scope := workflow.Scope(in)
	msgs, _ := model.Render([]canvas.Message{{Role: canvas.RoleUser, Content: "{{steps.draft.output.title}}: a text on {{topic}}"}}, nil, scope)
	fmt.Println(msgs[0].Content)
	// Output:
	// Night birds: a text on owls
}

// TestScope_Template checks that a template step reads exactly what Scope
// holds: rendering every scope name through the template action gives what
// model.Render gives over the whole Scope.
func TestScope_Template(t *testing.T) {
	in := &workflow.StepInput{
		Variables: map[string]any{"topic": "owls", "n": json.Number("1e3"), "steps.x": "not a step"},
		Steps: map[string]*workflow.Step{
			"a": endedStep("a", workflow.StepCompleted, `{"title": "T", "tags": ["x", 2]}`),
			"b": endedStep("b", workflow.StepSkipped, ""),
		},
	}
	scope := workflow.Scope(in)
	names := make([]string, 0, len(scope)+2)
	for name := range scope {
		names = append(names, name)
	}
	names = append(names, "steps.a.output.missing", "steps.c.output")
	sort.Strings(names)
	var text strings.Builder
	for _, name := range names {
		fmt.Fprintf(&text, "%s={{ %s }}\n", name, name)
	}
	want, err := model.Render([]canvas.Message{{Role: canvas.RoleUser, Content: text.String()}}, nil, scope)
	require.NoError(t, err)

	config, err := json.Marshal(map[string]string{"template": text.String()})
	require.NoError(t, err)
	out := mustExecute(t, mustBuiltinNode(t, nil, "t", "template", string(config)), in)
	assert.Equal(t, want[0].Content, out.Output)
	assert.Contains(t, out.Output, "steps.a.output.tags=[\"x\",2]\n")
	assert.Contains(t, out.Output, "steps.c.output={{ steps.c.output }}\n")
}
