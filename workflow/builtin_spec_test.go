package workflow_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// builtinSpec uses every built-in action with its default ports.
const builtinSpec = `{
	"specVersion": "1",
	"nodes": [
		{"id": "start", "name": "Start", "actionId": "input", "config": {"variables": [{"name": "topic", "required": true}]}},
		{"id": "draft", "name": "Draft", "actionId": "llm", "config": {"messages": [{"role": "user", "content": "Write on {{topic}}"}]}},
		{"id": "route", "name": "Route", "actionId": "condition", "config": {"branches": [{"port": "long", "when": "len(steps.draft.output) > 20"}], "default": "short"}},
		{"id": "check", "name": "Check", "actionId": "review", "config": {}},
		{"id": "ask", "name": "Ask", "actionId": "action", "config": {"inputSchema": {"type": "string"}}},
		{"id": "shorten", "name": "Shorten", "actionId": "template", "config": {"template": "{{steps.draft.output}}"}},
		{"id": "done", "name": "Done", "actionId": "output"}
	],
	"edges": [
		{"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
		{"from": {"node": "draft", "port": "out"}, "to": {"node": "route", "port": "in"}},
		{"from": {"node": "route", "port": "long"}, "to": {"node": "check", "port": "in"}},
		{"from": {"node": "route", "port": "short"}, "to": {"node": "ask", "port": "in"}},
		{"from": {"node": "check", "port": "approved"}, "to": {"node": "done", "port": "in"}},
		{"from": {"node": "check", "port": "rejected"}, "to": {"node": "shorten", "port": "in"}},
		{"from": {"node": "ask", "port": "out"}, "to": {"node": "done", "port": "in"}},
		{"from": {"node": "shorten", "port": "out"}, "to": {"node": "done", "port": "in"}}
	]
}`

func TestBuiltins_Compile(t *testing.T) {
	reg := workflow.Builtins(workflow.BuiltinOptions{Models: echoModels()})
	t.Run("OK", func(t *testing.T) {
		w, err := workflow.Compile(json.RawMessage(builtinSpec), reg)
		require.NoError(t, err)
		route := w.Node("route")
		require.NotNil(t, route)
		assert.Equal(t, []string{"in", "long", "short"}, portIDs(route.Ports))
		assert.Equal(t, []string{"in", "approved", "rejected"}, portIDs(w.Node("check").Ports))
		assert.Equal(t, []canvas.Variable{{Name: "topic", Type: canvas.VariableText, Required: true}},
			workflow.InputVariables(w.Start.Node))
	})
	t.Run("Details", func(t *testing.T) {
		var spec map[string]any
		require.NoError(t, json.Unmarshal([]byte(builtinSpec), &spec))
		nodes := spec["nodes"].([]any)
		nodes[0].(map[string]any)["config"] = map[string]any{"variables": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}
		nodes[2].(map[string]any)["config"] = map[string]any{"branches": []any{map[string]any{"port": "long", "when": "1 +"}}, "default": "short"}
		nodes[4].(map[string]any)["config"] = map[string]any{"inputSchema": map[string]any{"type": 3}}
		raw, err := json.Marshal(spec)
		require.NoError(t, err)
		_, err = workflow.Compile(raw, reg)
		require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
		paths := detailPaths(canvas.ErrorDetails(err))
		assert.Contains(t, paths, workflow.SpecPath+"/nodes/0/config/variables/1/name")
		assert.Contains(t, paths, workflow.SpecPath+"/nodes/2/config/branches/0/when")
		assert.True(t, slices.ContainsFunc(paths, func(p string) bool {
			return strings.HasPrefix(p, workflow.SpecPath+"/nodes/4/config/inputSchema")
		}), "%v", paths)
	})
}

func portIDs(ports []workflow.Port) []string {
	ids := make([]string, len(ports))
	for i, p := range ports {
		ids[i] = p.ID
	}
	return ids
}
