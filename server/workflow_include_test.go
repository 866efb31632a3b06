package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// RunWorkflows runs a queue worker executing the engine's workflow runs
// until the test ends.
func (fe *fullEnv) RunWorkflows(t *testing.T) {
	t.Helper()
	w := queue.NewWorker(fe.Store, queue.WorkerOptions{PollInterval: 10 * time.Millisecond})
	w.Handle(workflow.JobKindRun, fe.Engine.Workflows.HandleJob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// includingFlow is input → llm (a system message including include, and
// a user message) → output.
func includingFlow(include string) map[string]any {
	return spec([]any{
		node("start", "input", map[string]any{"variables": []any{
			map[string]any{"name": "name", "type": "text", "required": true},
			map[string]any{"name": "role", "type": "text"}}}),
		node("draft", "llm", map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "Style: " + include},
			map[string]any{"role": "user", "content": "Greet {{name}}."}}}),
		node("done", "output", nil)},
		edge("start", "out", "draft"), edge("draft", "out", "done"))
}

func TestWorkflow_Includes(t *testing.T) {
	w := newIncludeWorld(t)
	w.RunWorkflows(t)
	tone := w.canvas("Tone")
	toneV := w.mustVersion(tone, "Speak like a {{role}}.", map[string]any{"name": "role", "type": "text"})
	w.publish(tone, "production", toneV)
	flow := w.canvas("Flow")

	t.Run("RunResolves", func(t *testing.T) {
		res := w.Do(http.MethodPost, "/prompt-version", w.Editor, map[string]any{"promptId": flow,
			"workflowSpec": includingFlow("{{> " + tone + "}}")})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		version := res.Map(t)["id"].(string)

		res = w.Do(http.MethodPost, workflowRunsPath, w.Editor, map[string]any{"versionId": version,
			"input": map[string]any{"name": "Ada", "role": "pirate"}})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		id := res.Map(t)["id"].(string)

		var run struct {
			Status string
			Steps  []struct {
				ID       string
				Output   any
				Metadata struct{ Includes []canvas.Include }
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			res = w.Do(http.MethodGet, workflowRunsPath+"/"+id, w.Viewer, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res.JSON(t, &run)
			if workflow.Terminal(run.Status) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		require.Equal(t, workflow.StatusCompleted, run.Status, "%s", res.Body)
		require.Len(t, run.Steps, 3)
		draft := run.Steps[1]
		require.Equal(t, "draft", draft.ID)
		assert.Equal(t, "Style: Speak like a pirate.\nGreet Ada.", draft.Output,
			"the echo model got the included text, rendered over the run's variables")
		assert.Equal(t, []canvas.Include{{CanvasID: tone, Environment: "production", VersionID: toneV}},
			draft.Metadata.Includes)
	})

	t.Run("SaveRefusesUnresolvable", func(t *testing.T) {
		missing := "0194b5b0-0000-7000-8000-0000000000aa"
		res := w.Do(http.MethodPost, "/prompt-version", w.Editor, map[string]any{"promptId": flow,
			"workflowSpec": includingFlow("{{> " + missing + "}}")})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
		e := readError(t, res)
		assert.Equal(t, canvas.EINVALID, e.Code)
		require.Len(t, e.Details, 1)
		assert.Equal(t, "/json/workflowSpec/nodes/1/config/messages/0/content", e.Details[0].Path)
		assert.Contains(t, e.Details[0].Message, flow+" → "+missing+"@production: the canvas does not exist")

		res = w.Do(http.MethodPost, "/prompt-version", w.Editor, map[string]any{"promptId": flow,
			"workflowSpec": includingFlow("{{> " + tone + "@staging}}")})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
		assert.Contains(t, readError(t, res).Details[0].Message, "the canvas has no staging environment")
	})
}
