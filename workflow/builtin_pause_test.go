package workflow_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// resume resumes the paused step of n with payload.
func resume(t *testing.T, n *workflow.CNode, payload string) (*workflow.Outcome, error) {
	t.Helper()
	r, ok := n.Executor.(workflow.Resumer)
	require.True(t, ok, "%s is a Resumer", n.ActionID)
	return r.Resume(context.Background(), &workflow.StepInput{Node: n}, json.RawMessage(payload))
}

func TestReview(t *testing.T) {
	// reviewNode is a review node, with an edge from its rejected port
	// when rejectedEdge is set.
	reviewNode := func(t *testing.T, rejectedEdge bool) *workflow.CNode {
		n := mustBuiltinNode(t, nil, "check", "review", `{"instructions": "Check the draft."}`)
		linkBuiltin(n, "approved", mustBuiltinNode(t, nil, "publish", "output", `{}`))
		if rejectedEdge {
			linkBuiltin(n, "rejected", mustBuiltinNode(t, nil, "rewrite", "output", `{}`))
		}
		return n
	}
	t.Run("Pause", func(t *testing.T) {
		out := mustExecute(t, reviewNode(t, false), nil)
		assert.Equal(t, workflow.StepWaitingForReview, out.Pause)
		assert.Nil(t, out.Output)
	})
	t.Run("Approved", func(t *testing.T) {
		out, err := resume(t, reviewNode(t, false), `{"approved": true, "comment": "Fine."}`)
		require.NoError(t, err)
		assert.Equal(t, []string{"approved"}, out.Ports)
		assert.JSONEq(t, `{"approved": true, "comment": "Fine."}`, outputJSON(t, out))
		assert.Equal(t, map[string]any{"comment": "Fine."}, out.Metadata)
		assert.Empty(t, out.Pause)
	})
	t.Run("RejectedThroughPort", func(t *testing.T) {
		out, err := resume(t, reviewNode(t, true), `{"approved": false, "comment": "Too long."}`)
		require.NoError(t, err)
		assert.Equal(t, []string{"rejected"}, out.Ports)
		assert.JSONEq(t, `{"approved": false, "comment": "Too long."}`, outputJSON(t, out))
	})
	t.Run("RejectedFails", func(t *testing.T) {
		_, err := resume(t, reviewNode(t, false), `{"approved": false, "comment": "Too long."}`)
		requireCode(t, err, canvas.EREJECTED)
		assert.Equal(t, "The review rejected the run: Too long.", canvas.ErrorMessage(err))
		_, err = resume(t, reviewNode(t, false), `{"approved": false}`)
		requireCode(t, err, canvas.EREJECTED)
		assert.Equal(t, "The review rejected the run.", canvas.ErrorMessage(err))
	})
	t.Run("Payload", func(t *testing.T) {
		for _, c := range []struct{ payload, path string }{
			{`{}`, "/json/approved"},
			{`{"approved": null}`, "/json/approved"},
			{`{"approved": "yes"}`, "/json/approved"},
			{`[true]`, "/json/approved"},
			{`null`, "/json/approved"},
			{`{"approved": true, "comment": 3}`, "/json/comment"},
		} {
			_, err := resume(t, reviewNode(t, true), c.payload)
			requireCode(t, err, canvas.EINVALID, c.path)
		}
	})
	t.Run("Ports", func(t *testing.T) {
		in := workflow.Port{ID: "in", Dir: workflow.DirIn, Type: workflow.FlowType}
		ok := workflow.Port{ID: "ok", Dir: workflow.DirOut, Type: workflow.FlowType}
		assert.Equal(t, []string{"/ports"}, detailPaths(builtinDetails(t, "review", `{}`, in, ok)))
		approved := workflow.Port{ID: "approved", Dir: workflow.DirOut, Type: workflow.FlowType}
		assert.Empty(t, builtinDetails(t, "review", `{}`, in, approved))
	})
}

func TestAction(t *testing.T) {
	t.Run("Pause", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "ask", "action", `{"instructions": "Give the budget."}`)
		out := mustExecute(t, n, nil)
		assert.Equal(t, workflow.StepRequiresAction, out.Pause)
		assert.Nil(t, out.Output)
	})
	t.Run("Resume", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "ask", "action", `{}`)
		out, err := resume(t, n, `{"input": {"budget": 120.50, "tags": ["a"]}}`)
		require.NoError(t, err)
		assert.JSONEq(t, `{"budget": 120.50, "tags": ["a"]}`, outputJSON(t, out))
		assert.Nil(t, out.Ports)

		out, err = resume(t, n, `{}`)
		require.NoError(t, err)
		assert.Equal(t, "null", outputJSON(t, out), "an absent input is null")
	})
	t.Run("Schema", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "ask", "action", `{"inputSchema": {"type": "object", "required": ["budget"],
			"properties": {"budget": {"type": "number", "minimum": 0}, "note": {"type": "string"}}}}`)
		out, err := resume(t, n, `{"input": {"budget": 5}}`)
		require.NoError(t, err)
		assert.JSONEq(t, `{"budget": 5}`, outputJSON(t, out))

		_, err = resume(t, n, `{"input": {"budget": -1, "note": 2}}`)
		requireCode(t, err, canvas.EINVALID, "/json/input/budget", "/json/input/note")
		_, err = resume(t, n, `{"input": {}}`)
		requireCode(t, err, canvas.EINVALID, "/json/input")
		_, err = resume(t, n, `{}`)
		requireCode(t, err, canvas.EINVALID, "/json/input")
		_, err = resume(t, n, `"input"`)
		requireCode(t, err, canvas.EINVALID, "/json")
	})
	t.Run("BadSchema", func(t *testing.T) {
		details := builtinDetails(t, "action", `{"inputSchema": {"type": "nothing"}}`)
		require.NotEmpty(t, details)
		for _, d := range details {
			assert.Contains(t, d.Path, "/config/inputSchema")
		}
		details = builtinDetails(t, "action", `{"inputSchema": {"$ref": "http://example.com/s.json"}}`)
		require.NotEmpty(t, details)
		assert.Contains(t, details[0].Path, "/config/inputSchema")
	})
}
