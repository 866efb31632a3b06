package workflow_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/workflow"
)

// TestDocsTransitionTable keeps the table of docs/workflows.md equal to the
// transition table the service enforces: same rows, same order.
func TestDocsTransitionTable(t *testing.T) {
	raw, err := os.ReadFile("../docs/workflows.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(raw), "| from | trigger | to |\n|---|---|---|\n")
	require.True(t, ok, "docs/workflows.md has the transition table")
	phrases := map[workflow.Trigger][]string{
		workflow.TriggerStart: {"a worker"}, workflow.TriggerComplete: {"a leaf step completed"},
		workflow.TriggerFail: {"a step failed"}, workflow.TriggerAwaitReview: {"a review step waits"},
		workflow.TriggerAwaitAction: {"an action step waits"}, workflow.TriggerReview: {"review: approved"},
		workflow.TriggerReject: {"review: rejected", "fails the action step"}, workflow.TriggerResume: {"resume with input"},
		workflow.TriggerCancel: {"cancel"}, workflow.TriggerDeadline: {"deadline"},
	}
	var rows [][3]string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 3, line)
		rows = append(rows, [3]string{strings.Trim(strings.TrimSpace(cells[0]), "`"), strings.TrimSpace(cells[1]),
			strings.Trim(strings.TrimSpace(cells[2]), "`")})
	}
	want := workflow.Transitions()
	require.Len(t, rows, len(want))
	for i, tr := range want {
		assert.Equal(t, tr.From, rows[i][0], "row %d", i)
		matched := false
		for _, p := range phrases[tr.Trigger] {
			matched = matched || strings.Contains(rows[i][1], p)
		}
		assert.True(t, matched, "row %d: %q does not describe %s", i, rows[i][1], tr.Trigger)
		assert.Equal(t, tr.To, rows[i][2], "row %d", i)
	}
}

// TestDocsExample compiles the example of docs/workflows.md with the
// built-in actions, so that the documented specification stays valid.
func TestDocsExample(t *testing.T) {
	raw, err := os.ReadFile("../docs/workflows.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "```json\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	var body struct {
		IsWorkflow   bool            `json:"isWorkflow"`
		WorkflowSpec json.RawMessage `json:"workflowSpec"`
	}
	require.NoError(t, json.Unmarshal([]byte(example), &body))
	assert.True(t, body.IsWorkflow)
	w, err := workflow.Compile(body.WorkflowSpec, workflow.Builtins(workflow.BuiltinOptions{}))
	require.NoError(t, err)
	assert.Len(t, w.Nodes, 7)
	assert.Equal(t, "start", w.Start.ID)
}
