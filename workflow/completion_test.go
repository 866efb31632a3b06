package workflow_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// completions returns a completion service that runs the harness'
// workflows.
func (h *harness) completions() *completion.Service {
	return completion.NewService(completion.Options{Store: h.db, Canvases: h.db, Environments: env.NewService(env.Options{Store: h.db, Canvases: h.db, Changes: h.db}),
		Models: model.NewCaller(model.Options{}), Workflows: h.svc,
		Notify: h.worker.Notify})
}

func TestRunWorkflow_SyncCompletion(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	svc := h.completions()
	versionID := h.version(draftSpec)

	var started *completion.Run
	var chunks []string
	run, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: versionID,
		Variables: map[string]any{"topic": "hi"},
		Started:   func(r *completion.Run) { started = r },
		Stream:    func(c model.Chunk) error { chunks = append(chunks, c.Text); return nil }})
	require.NoError(t, err)
	assert.Equal(t, completion.KindWorkflow, run.Kind)
	assert.Equal(t, completion.StatusCompleted, run.Status)
	assert.Equal(t, workflow.StatusCompleted, run.WorkflowStatus)
	require.NotNil(t, run.Result)
	assert.Equal(t, "Short: hi", run.Result.Choices[0].Message.Content.Text)
	assert.Equal(t, model.Usage{InputTokens: 3, OutputTokens: 5}, run.Result.Usage)
	assert.Same(t, run, started)
	assert.Equal(t, []string{"Short: hi"}, chunks, "the output text is streamed once the output step completes")

	v, err := h.svc.Get(h.ctx, run.ID)
	require.NoError(t, err, "the execution id finds the run")
	assert.Equal(t, run.ID, v.ID, "a run started through completions shows its execution id")
	assert.Equal(t, workflow.EnvAPI, v.Environment)

	_, err = svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: versionID})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	assert.Equal(t, "/json/variables/topic", canvas.ErrorDetails(err)[0].Path)
}

func TestRunWorkflow_Paused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	svc := h.completions()
	started := false
	run, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: h.version(draftSpec),
		Variables: map[string]any{"topic": "a long enough topic"}, WorkflowEnvironment: workflow.EnvTestCase,
		Started: func(*completion.Run) { started = true }})
	require.NoError(t, err)
	assert.True(t, run.Paused())
	assert.Equal(t, workflow.StatusWaitingForReview, run.WorkflowStatus)
	assert.Nil(t, run.Result)
	assert.False(t, started, "nothing is streamed for a paused run")

	v, err := h.svc.Get(h.ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.EnvTestCase, v.Environment)
	_, err = h.svc.Review(h.ctx, run.ID, workflow.ReviewParams{Approved: true})
	require.NoError(t, err)
	h.await(run.ID, workflow.StatusCompleted)
}

func TestRunWorkflow_Async(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	svc := h.completions()
	run, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: h.version(linearSpec),
		Variables: map[string]any{"word": "w"}, Async: true})
	require.NoError(t, err)
	assert.True(t, run.Async)
	assert.Equal(t, completion.StatusQueued, run.Status)
	v := h.await(run.ID, workflow.StatusCompleted)
	assert.Equal(t, "B: A: w", output(t, v.Output))

	// The completion is read back as completions are.
	got, err := svc.GetRun(h.ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, completion.KindWorkflow, got.Kind)
	assert.Equal(t, completion.StatusCompleted, got.Status)
	assert.Equal(t, workflow.StatusCompleted, got.WorkflowStatus)
	assert.Equal(t, "B: A: w", got.Result.Choices[0].Message.Content.Text)
	assert.NotNil(t, got.CompletedAt)

	paused, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: h.version(actionSpec), Async: true})
	require.NoError(t, err)
	h.await(paused.ID, workflow.StatusRequiresAction)
	got, err = svc.GetRun(h.ctx, paused.ID)
	require.NoError(t, err)
	assert.Equal(t, completion.StatusRunning, got.Status, "a paused workflow run is still running")
	assert.Equal(t, workflow.StatusRequiresAction, got.WorkflowStatus)
	_, err = h.svc.Cancel(h.ctx, paused.ID)
	require.NoError(t, err)
	got, err = svc.GetRun(h.ctx, paused.ID)
	require.NoError(t, err)
	assert.Equal(t, completion.StatusFailed, got.Status)
	assert.Equal(t, canvas.ECONFLICT, got.Error.Code, "a cancelled run answers as its sync completion would")

	preview := h.start(linearSpec, map[string]any{"word": "w"})
	_, err = svc.GetRun(h.ctx, preview.ID)
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "a preview run is not a completion")
}

func TestRunWorkflow_Ended(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, harnessOptions{register: func(r *workflow.Registry) { r.Register("fail", failing{&runs}) }})
	svc := h.completions()
	failSpec := strings.Replace(linearSpec, `"actionId": "template", "config": {"template": "B: {{steps.a.output}}"}`, `"actionId": "fail"`, 1)
	_, _, err := env.NewService(env.Options{Store: h.db, Canvases: h.db, Changes: h.db}).Publish(h.ctx, env.PublishVersionParams{CanvasID: h.canvasID,
		EnvName: env.Production, VersionID: h.version(failSpec)})
	require.NoError(t, err)
	run, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, Variables: map[string]any{"word": "w"}})
	require.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err), "the promoted workflow version ran and failed")
	assert.Contains(t, canvas.ErrorMessage(err), run.ID)
	assert.Equal(t, completion.StatusFailed, run.Status)
	assert.Equal(t, workflow.StatusFailed, run.WorkflowStatus)

	h.models.blockNext()
	slow := withTimeout(draftSpec, 1)
	run, err = svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: h.version(slow),
		Variables: map[string]any{"topic": "t"}})
	assert.Equal(t, canvas.ETIMEOUT, canvas.ErrorCode(err))
	assert.Equal(t, workflow.StatusTimeout, run.WorkflowStatus)
}
