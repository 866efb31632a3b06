package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// The tests of service_test.go cover the transitions a run takes on its
// own way; these cover the others of the table: a cancellation or a
// deadline in each status, and an action's input that fails its step.

// withTimeout sets the timeoutSeconds of spec.
func withTimeout(spec string, seconds int) string {
	return strings.Replace(spec, `"specVersion": "1",`, fmt.Sprintf(`"specVersion": "1", "timeoutSeconds": %d,`, seconds), 1)
}

func TestTransition_PendingCancelled(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	id := h.start(linearSpec, map[string]any{"word": "w"}).ID
	got, err := h.svc.Cancel(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, got.Status)
	for id, status := range steps(got) {
		assert.Equal(t, "cancelled", status, id)
	}
	h.startWorker()
	h.stop() // the worker had nothing to claim: the run's jobs were cancelled with it
	v, err := h.svc.Get(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, v.Status)
	assert.Equal(t, "cancelled", step(t, v, "start").Status, "no step ran")
}

func TestTransition_PendingTimeout(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	id := h.start(withTimeout(linearSpec, 1), map[string]any{"word": "w"}).ID
	// A worker that only times runs out: the run stays pending until its
	// deadline.
	w := queue.NewWorker(h.db, queue.WorkerOptions{PollInterval: 20 * time.Millisecond})
	w.Handle(workflow.JobKindDeadline, h.svc.HandleDeadline)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	v := h.await(id, workflow.StatusTimeout)
	assert.Equal(t, canvas.ETIMEOUT, v.Error.Code)
	assert.Equal(t, "cancelled", step(t, v, "start").Status)
}

func TestTransition_WaitingForReviewCancelledOrTimeout(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := h.start(draftSpec, map[string]any{"topic": "a long enough topic"}).ID
	h.await(id, workflow.StatusWaitingForReview)
	got, err := h.svc.Cancel(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, got.Status)
	review := step(t, got, "review")
	assert.Equal(t, "cancelled", review.Status)
	assert.Equal(t, canvas.ECANCELLED, review.Error.Code)
	_, err = h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: true})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))

	id = h.start(withTimeout(draftSpec, 1), map[string]any{"topic": "a long enough topic"}).ID
	h.await(id, workflow.StatusWaitingForReview)
	v := h.await(id, workflow.StatusTimeout)
	assert.Equal(t, canvas.ETIMEOUT, step(t, v, "review").Error.Code)
}

func TestTransition_RequiresActionCancelled(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := h.start(actionSpec, nil).ID
	h.await(id, workflow.StatusRequiresAction)
	got, err := h.svc.Cancel(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, got.Status)
	_, err = h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{"n": 1}`)})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
}

// approval is an embedder's pausing action: its step waits for input, and
// an input {"ok": false} fails it.
type approval struct{}

func (approval) ConfigSchema() json.RawMessage { return nil }
func (approval) DefaultPorts(json.RawMessage) []workflow.Port {
	return []workflow.Port{{ID: "in", Dir: "in", Type: "flow"}, {ID: "out", Dir: "out", Type: "flow"}}
}
func (a approval) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return a, nil }
func (approval) Execute(context.Context, *workflow.StepInput) (*workflow.Outcome, error) {
	return &workflow.Outcome{Pause: workflow.StepRequiresAction}, nil
}
func (approval) Resume(_ context.Context, _ *workflow.StepInput, payload json.RawMessage) (*workflow.Outcome, error) {
	var body struct {
		Input struct {
			OK *bool `json:"ok"`
		} `json:"input"`
	}
	if err := json.Unmarshal(payload, &body); err != nil || body.Input.OK == nil {
		return nil, canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/json/input/ok", Message: "is required"})
	}
	if !*body.Input.OK {
		return nil, &canvas.Error{Code: "DENIED", Message: "The approver said no."}
	}
	return &workflow.Outcome{Output: "ok"}, nil
}

func TestTransition_RequiresActionFailed(t *testing.T) {
	h := newHarness(t, harnessOptions{register: func(r *workflow.Registry) { r.Register("approval", approval{}) }})
	id := h.start(strings.Replace(actionSpec, `"actionId": "action"`, `"actionId": "approval"`, 1), nil).ID
	h.await(id, workflow.StatusRequiresAction)

	_, err := h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{}`)})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "a refused input changes nothing")
	got, err := h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{"ok": false}`)})
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusFailed, got.Status)
	assert.Equal(t, &workflow.Error{Code: "DENIED", Message: "The approver said no."}, got.Error)
	assert.Equal(t, "failed", step(t, got, "ask").Status)
	assert.Equal(t, "cancelled", step(t, got, "out").Status)
}
