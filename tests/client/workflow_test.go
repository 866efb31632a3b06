package clienttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reviewSpec is a workflow that waits for a review before its output.
const reviewSpec = `{
  "specVersion": "1",
  "nodes": [
    {"id": "start", "name": "Topic", "actionId": "input",
     "config": {"variables": [{"name": "topic", "type": "text", "required": true}]}},
    {"id": "review", "name": "Review", "actionId": "review", "config": {"instructions": "Approve."}},
    {"id": "result", "name": "Result", "actionId": "output"}
  ],
  "edges": [
    {"from": {"node": "start", "port": "out"}, "to": {"node": "review", "port": "in"}},
    {"from": {"node": "review", "port": "approved"}, "to": {"node": "result", "port": "in"}}
  ]
}`

func TestClient_WorkflowRuns(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	p, err := c.CreateProject(ctx, "flows")
	require.NoError(t, err)
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Flow", ProjectID: &p.ID})
	require.NoError(t, err)
	v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID, IsWorkflow: true,
		WorkflowSpec: json.RawMessage(reviewSpec)})
	require.NoError(t, err)
	req := wire.CompletionRequest{CanvasID: cv.ID, VersionID: v.ID, Variables: map[string]any{"topic": "tea"}}

	start := func(t *testing.T) string {
		t.Helper()
		_, err := c.Complete(ctx, req)
		var accepted *client.AcceptedError
		require.ErrorAs(t, err, &accepted, "the run pauses for its review")
		assert.Equal(t, wire.WorkflowWaitingForReview, accepted.Accepted.Status)
		return accepted.Accepted.ID
	}

	t.Run("Review", func(t *testing.T) {
		id := start(t)
		run, err := c.GetWorkflowRun(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, wire.WorkflowWaitingForReview, run.Status)
		_, err = c.ReviewWorkflowRun(ctx, id, wire.ReviewParams{Approved: true, Comment: "ok"})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			run, err := c.GetWorkflowRun(ctx, id)
			return err == nil && run.Status == wire.WorkflowCompleted
		}, waitFor, tick)
	})

	t.Run("Cancel", func(t *testing.T) {
		id := start(t)
		run, err := c.CancelWorkflowRun(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, wire.WorkflowCancelled, run.Status)
		_, err = c.CancelWorkflowRun(ctx, id)
		assert.Equal(t, wire.CodeConflict, client.ErrorCode(err), "a run that ended cannot be cancelled")
	})

	t.Run("ResumeNotWaiting", func(t *testing.T) {
		id := start(t)
		_, err := c.ResumeWorkflowRun(ctx, id, wire.ResumeParams{Input: json.RawMessage(`{}`)})
		assert.Equal(t, wire.CodeConflict, client.ErrorCode(err), "a run waiting for review needs no action")
	})
}
