package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

func TestCondition(t *testing.T) {
	n := mustBuiltinNode(t, nil, "route", "condition", `{"branches": [
		{"port": "long", "when": "len(steps.draft.output) > input.limit"},
		{"port": "flagged", "when": "steps.review.output.score >= 7 && steps.review.status == \"completed\""},
		{"port": "vip", "when": "tier == \"gold\""}
	], "default": "short"}`)
	steps := func(draft string, score string) map[string]*workflow.Step {
		return map[string]*workflow.Step{
			"draft":  endedStep("draft", workflow.StepCompleted, draft),
			"review": endedStep("review", workflow.StepCompleted, `{"score": `+score+`}`),
		}
	}
	for _, c := range []struct {
		name string
		in   *workflow.StepInput
		want string
	}{
		{"FirstTrue", &workflow.StepInput{Variables: map[string]any{"limit": 3}, Steps: steps(`"a long text"`, "9")}, "long"},
		{"SecondTrue", &workflow.StepInput{Variables: map[string]any{"limit": 30}, Steps: steps(`"a long text"`, "7.0")}, "flagged"},
		{"TopLevelVariable", &workflow.StepInput{Variables: map[string]any{"limit": json.Number("30"), "tier": "gold"}, Steps: steps(`"x"`, "1")}, "vip"},
		{"Default", &workflow.StepInput{Variables: map[string]any{"limit": json.Number("30")}, Steps: steps(`"x"`, "1")}, "short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := mustExecute(t, n, c.in)
			assert.Equal(t, []string{c.want}, out.Ports)
			assert.JSONEq(t, `{"port": "`+c.want+`"}`, outputJSON(t, out))
		})
	}
	t.Run("NoBranchMatched", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "route", "condition", `{"branches": [{"port": "yes", "when": "input.ok"}]}`)
		_, err := execute(n, &workflow.StepInput{Variables: map[string]any{"ok": false}})
		requireCode(t, err, canvas.EINVALID)
		assert.Contains(t, canvas.ErrorMessage(err), "No branch matched")
		// An absent variable is nil, which is not true.
		_, err = execute(n, nil)
		requireCode(t, err, canvas.EINVALID)
	})
	t.Run("NamesClash", func(t *testing.T) {
		// Variables named input or steps are read through input only.
		n := mustBuiltinNode(t, nil, "route", "condition", `{"branches": [{"port": "yes", "when": "input.steps == 1 && input.input == 2"}], "default": "no"}`)
		out := mustExecute(t, n, &workflow.StepInput{Variables: map[string]any{"steps": 1, "input": 2}})
		assert.Equal(t, []string{"yes"}, out.Ports)
	})
	t.Run("EvaluationError", func(t *testing.T) {
		// A step that has not ended has no output to read.
		n := mustBuiltinNode(t, nil, "route", "condition", `{"branches": [{"port": "yes", "when": "steps.later.output == 1"}]}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EINVALID)
		assert.Contains(t, canvas.ErrorMessage(err), `branch 0 (port "yes")`)
		// A value that is not a boolean.
		n = mustBuiltinNode(t, nil, "route", "condition", `{"branches": [{"port": "yes", "when": "input.name"}]}`)
		_, err = execute(n, &workflow.StepInput{Variables: map[string]any{"name": "Ada"}})
		requireCode(t, err, canvas.EINVALID)
	})
	t.Run("CompileErrors", func(t *testing.T) {
		details := builtinDetails(t, "condition", `{"branches": [
			{"port": "a", "when": "input.x > 1"},
			{"port": "b", "when": "input.x >"},
			{"port": "c", "when": "\"text\""}
		]}`)
		require.Len(t, details, 2)
		assert.Equal(t, "/config/branches/1/when", details[0].Path)
		assert.Equal(t, "/config/branches/2/when", details[1].Path)
		assert.Contains(t, details[1].Message, "expected bool")
		assert.NotContains(t, details[0].Message, "\n", "no source excerpt")
	})
	t.Run("Ports", func(t *testing.T) {
		in := workflow.Port{ID: "in", Dir: workflow.DirIn, Type: workflow.FlowType}
		yes := workflow.Port{ID: "yes", Dir: workflow.DirOut, Type: workflow.FlowType}
		config := `{"branches": [{"port": "yes", "when": "true"}, {"port": "in", "when": "false"}, {"port": "maybe", "when": "false"}], "default": "no"}`
		assert.Equal(t, []string{"/config/branches/1/port", "/config/branches/2/port", "/config/default"},
			detailPaths(builtinDetails(t, "condition", config, in, yes)))
		// Without listed ports the defaults follow the config.
		assert.Empty(t, builtinDetails(t, "condition", config))
	})
}
