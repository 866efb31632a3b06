package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// linearSpec is input → a → b → out, all templates.
const linearSpec = `{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input", "config": {"variables": [{"name": "word", "type": "text", "required": true}]}},
	{"id": "a", "actionId": "template", "config": {"template": "A: {{word}}"}},
	{"id": "b", "actionId": "template", "config": {"template": "B: {{steps.a.output}}"}},
	{"id": "out", "actionId": "output"}],
 "edges": [
	{"from": {"node": "start", "port": "out"}, "to": {"node": "a", "port": "in"}},
	{"from": {"node": "a", "port": "out"}, "to": {"node": "b", "port": "in"}},
	{"from": {"node": "b", "port": "out"}, "to": {"node": "out", "port": "in"}}]}`

// draftSpec drafts with llm, branches on the draft's length, and either
// goes through a review and a polish, or shortens; both lead to the output.
const draftSpec = `{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input", "config": {"variables": [{"name": "topic", "type": "text", "required": true}]}},
	{"id": "draft", "actionId": "llm", "config": {"model": "fake", "messages": [{"role": "user", "content": "{{topic}}"}]}},
	{"id": "check", "actionId": "condition", "config": {"branches": [{"port": "long", "when": "len(steps.draft.output) > 10"}], "default": "short"}},
	{"id": "review", "actionId": "review", "config": {"instructions": "Check the draft."}},
	{"id": "polish", "actionId": "template", "config": {"template": "Polished: {{steps.draft.output}}"}},
	{"id": "shorten", "actionId": "template", "config": {"template": "Short: {{steps.draft.output}}"}},
	{"id": "final", "actionId": "output"}],
 "edges": [
	{"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
	{"from": {"node": "draft", "port": "out"}, "to": {"node": "check", "port": "in"}},
	{"from": {"node": "check", "port": "long"}, "to": {"node": "review", "port": "in"}},
	{"from": {"node": "check", "port": "short"}, "to": {"node": "shorten", "port": "in"}},
	{"from": {"node": "review", "port": "approved"}, "to": {"node": "polish", "port": "in"}},
	{"from": {"node": "polish", "port": "out"}, "to": {"node": "final", "port": "in"}},
	{"from": {"node": "shorten", "port": "out"}, "to": {"node": "final", "port": "in"}}]}`

func TestRun_Linear(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	started := h.start(linearSpec, map[string]any{"word": "hello"})
	assert.Equal(t, workflow.EnvCraftPreview, started.Environment)
	assert.Nil(t, started.Graph)
	assert.Nil(t, started.Output)

	v := h.await(started.ID, workflow.StatusCompleted)
	assert.Equal(t, []string{"start", "a", "b", "out"}, stepIDs(v), "steps in topological order")
	assert.Equal(t, map[string]string{"start": "completed", "a": "completed", "b": "completed", "out": "completed"}, steps(v))
	require.NotNil(t, v.Output)
	assert.Equal(t, "out", v.Output.ID)
	assert.Equal(t, "B: A: hello", output(t, v.Output))
	assert.JSONEq(t, `{"a": "A: hello"}`, string(step(t, v, "b").Input), "a step's input is its predecessors' outputs")
	assert.Equal(t, "hello", v.Input["word"].Value)
	assert.True(t, v.Input["word"].Required)
	assert.NotNil(t, v.CompletedAt)
	assert.WithinDuration(t, v.StartedAt.Add(workflow.DefaultTimeout), v.Deadline, time.Second)

	require.NotNil(t, v.Graph)
	require.Len(t, v.Graph.Nodes, 4)
	for _, n := range v.Graph.Nodes {
		assert.Equal(t, "completed", n.Status, n.ID)
		assert.NotEmpty(t, n.Ports, n.ID)
	}
	assert.Len(t, v.Graph.Edges, 3)
}

func stepIDs(v *workflow.View) []string {
	var ids []string
	for _, s := range v.Steps {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestRun_InputChecked(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	id := h.version(linearSpec)
	_, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: id})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	assert.Equal(t, []canvas.Detail{{Path: "/json/input/word", Message: "required variable has no value"}}, canvas.ErrorDetails(err))

	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: id, Input: map[string]any{"word": "x"}, StartNodeID: "nope"})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	assert.Equal(t, "/json/startNodeId", canvas.ErrorDetails(err)[0].Path)

	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: "not-a-uuid"})
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))

	plain, err := h.canvases.CreateVersion(h.ctx, canvas.CreateVersionParams{PromptID: h.canvasID})
	require.NoError(t, err)
	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: plain.ID})
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "not a workflow version")

	viewer := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: canvas.PrincipalFrom(h.ctx).WorkspaceID,
		UserID: "ada", Role: canvas.RoleViewer})
	_, err = h.svc.Start(viewer, workflow.StartParams{VersionID: id, Input: map[string]any{"word": "x"}})
	assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))

	_, err = h.svc.Get(h.ctx, "6f1c0a0e-0000-4000-8000-000000000000")
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
}

func TestRun_ConditionSkipsUnselectedBranchesTransitively(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	v := h.await(h.start(draftSpec, map[string]any{"topic": "hi"}).ID, workflow.StatusCompleted)
	assert.Equal(t, map[string]string{"start": "completed", "draft": "completed", "check": "completed",
		"review": "skipped", "polish": "skipped", "shorten": "completed", "final": "completed"}, steps(v))
	assert.Equal(t, "Short: hi", output(t, v.Output))
	assert.JSONEq(t, `{"inputTokens": 3, "outputTokens": 5}`, usageOf(t, step(t, v, "draft")))
}

func usageOf(t testing.TB, s *workflow.Step) string {
	t.Helper()
	var meta struct {
		Usage json.RawMessage `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(s.Metadata, &meta))
	return string(meta.Usage)
}

func TestRun_ReviewApproved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := h.start(draftSpec, map[string]any{"topic": "a long enough topic"}).ID
	v := h.await(id, workflow.StatusWaitingForReview)
	assert.Equal(t, "waiting-for-review", step(t, v, "review").Status)
	assert.Equal(t, "pending", step(t, v, "polish").Status)
	assert.Equal(t, "skipped", step(t, v, "shorten").Status)
	assert.Nil(t, v.Output)

	_, err := h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{}`)})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err), "a run waiting for review takes no action input")

	got, err := h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: true, Comment: "fine"})
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusRunning, got.Status)
	assert.Nil(t, got.Graph)

	v = h.await(id, workflow.StatusCompleted)
	assert.Equal(t, "completed", step(t, v, "review").Status)
	assert.Equal(t, "Polished: a long enough topic", output(t, v.Output))

	_, err = h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: true})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err), "a completed run takes no review")
}

func TestRun_ReviewRejectedFailsWithoutRejectedPort(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := h.start(draftSpec, map[string]any{"topic": "a long enough topic"}).ID
	h.await(id, workflow.StatusWaitingForReview)
	got, err := h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: false, Comment: "no"})
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusFailed, got.Status)
	require.NotNil(t, got.Error)
	assert.Equal(t, canvas.EREJECTED, got.Error.Code)
	assert.Equal(t, map[string]string{"start": "completed", "draft": "completed", "check": "completed",
		"review": "failed", "polish": "cancelled", "shorten": "skipped", "final": "cancelled"}, steps(got))
}

func TestRun_ReviewRejectedGoesThroughRejectedPort(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	spec := strings.Replace(draftSpec, `{"from": {"node": "shorten", "port": "out"}, "to": {"node": "final", "port": "in"}}]}`,
		`{"from": {"node": "shorten", "port": "out"}, "to": {"node": "final", "port": "in"}},
	{"from": {"node": "review", "port": "rejected"}, "to": {"node": "redo", "port": "in"}},
	{"from": {"node": "redo", "port": "out"}, "to": {"node": "final", "port": "in"}}]}`, 1)
	spec = strings.Replace(spec, `{"id": "final", "actionId": "output"}]`,
		`{"id": "final", "actionId": "output"},
	{"id": "redo", "actionId": "template", "config": {"template": "Rejected: {{steps.review.output.comment}}"}}]`, 1)
	id := h.start(spec, map[string]any{"topic": "a long enough topic"}).ID
	h.await(id, workflow.StatusWaitingForReview)
	_, err := h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: false, Comment: "too long"})
	require.NoError(t, err)
	v := h.await(id, workflow.StatusCompleted)
	assert.Equal(t, "skipped", step(t, v, "polish").Status)
	assert.Equal(t, "Rejected: too long", output(t, v.Output))
}

// actionSpec waits for an action whose input must be an object with a
// number n, then renders it.
const actionSpec = `{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input"},
	{"id": "ask", "actionId": "action", "config": {"instructions": "Give n.",
		"inputSchema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}}}}},
	{"id": "out", "actionId": "output", "config": {"value": "n = {{steps.ask.output.n}}"}}],
 "edges": [
	{"from": {"node": "start", "port": "out"}, "to": {"node": "ask", "port": "in"}},
	{"from": {"node": "ask", "port": "out"}, "to": {"node": "out", "port": "in"}}]}`

func TestRun_ActionResume(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := h.start(actionSpec, nil).ID
	h.await(id, workflow.StatusRequiresAction)

	_, err := h.svc.Review(h.ctx, id, workflow.ReviewParams{Approved: true})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err), "a run that requires action takes no review")

	_, err = h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{"n": "seven"}`)})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	v, err := h.svc.Get(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusRequiresAction, v.Status, "refused input leaves the run waiting")

	got, err := h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{"n": 7}`)})
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusRunning, got.Status)
	v = h.await(id, workflow.StatusCompleted)
	assert.Equal(t, "n = 7", output(t, v.Output))
	assert.JSONEq(t, `{"n": 7}`, string(step(t, v, "ask").Output))
}

func TestRun_Parallel(t *testing.T) {
	h := newHarness(t, harnessOptions{concurrency: 3})
	var nodes, edges, joined []string
	for _, b := range []string{"b1", "b2", "b3", "b4", "b5", "b6"} {
		nodes = append(nodes, `{"id": "`+b+`", "actionId": "template", "config": {"template": "`+b+`"}}`)
		edges = append(edges, `{"from": {"node": "start", "port": "out"}, "to": {"node": "`+b+`", "port": "in"}}`,
			`{"from": {"node": "`+b+`", "port": "out"}, "to": {"node": "join", "port": "in"}}`)
		joined = append(joined, "{{steps."+b+".output}}")
	}
	spec := `{"specVersion": "1", "nodes": [{"id": "start", "actionId": "input"}, ` + strings.Join(nodes, ", ") +
		`, {"id": "join", "actionId": "output", "config": {"value": "` + strings.Join(joined, "+") + `"}}], "edges": [` +
		strings.Join(edges, ", ") + `]}`
	v := h.await(h.start(spec, nil).ID, workflow.StatusCompleted)
	assert.Equal(t, "b1+b2+b3+b4+b5+b6", output(t, v.Output))
	assert.Len(t, v.Steps, 8)
}

func TestRun_Partial(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	got, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(linearSpec),
		Input: map[string]any{"word": "x"}, StartNodeID: "a", EndNodeID: "b"})
	require.NoError(t, err)
	require.NotNil(t, got.StartNodeID)
	assert.Equal(t, "a", *got.StartNodeID)
	v := h.await(got.ID, workflow.StatusCompleted)
	assert.Equal(t, map[string]string{"start": "skipped", "a": "completed", "b": "completed", "out": "skipped"}, steps(v))
	assert.Equal(t, "b", v.Output.ID, "the end node is the partial run's leaf")
	assert.Equal(t, "B: A: x", output(t, v.Output))

	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(linearSpec),
		Input: map[string]any{"word": "x"}, StartNodeID: "b", EndNodeID: "a"})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	assert.Equal(t, "/json/endNodeId", canvas.ErrorDetails(err)[0].Path)
}

func TestRun_CancelDuringSlowModelCall(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	called, cancelled := h.models.blockNext()
	id := h.start(draftSpec, map[string]any{"topic": "hi"}).ID
	<-called
	h.awaitStep(id, "draft", "running")

	got, err := h.svc.Cancel(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, got.Status)
	assert.Nil(t, got.Graph, "the cancel answer has no graph")
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the model call was not cancelled")
	}
	_, err = h.svc.Cancel(h.ctx, id)
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err), "a cancelled run cannot be cancelled again")

	h.stop() // every job has finished: nothing can change the run any more
	v, err := h.svc.Get(h.ctx, id)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusCancelled, v.Status)
	for id, status := range steps(v) {
		if id == "start" {
			assert.Equal(t, "completed", status)
			continue
		}
		assert.Equal(t, "cancelled", status, "step %s", id)
	}
	assert.Equal(t, canvas.ECANCELLED, step(t, v, "draft").Error.Code)
	h.models.mu.Lock()
	assert.Equal(t, 1, h.models.calls, "no model call after the cancellation")
	h.models.mu.Unlock()
}

func TestRun_TimeoutCancelsTheStepInFlight(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	_, cancelled := h.models.blockNext()
	spec := withTimeout(draftSpec, 1)
	id := h.start(spec, map[string]any{"topic": "hi"}).ID
	v := h.await(id, workflow.StatusTimeout)
	<-cancelled
	require.NotNil(t, v.Error)
	assert.Equal(t, canvas.ETIMEOUT, v.Error.Code)
	draft := step(t, v, "draft")
	assert.Equal(t, "cancelled", draft.Status)
	assert.Equal(t, canvas.ETIMEOUT, draft.Error.Code)
	assert.Equal(t, "cancelled", step(t, v, "final").Status)
}

func TestRun_TimeoutWhilePaused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	spec := withTimeout(actionSpec, 1)
	id := h.start(spec, nil).ID
	h.await(id, workflow.StatusRequiresAction)
	v := h.await(id, workflow.StatusTimeout)
	assert.Equal(t, "cancelled", step(t, v, "ask").Status)
	_, err := h.svc.Resume(h.ctx, id, workflow.ResumeParams{Input: json.RawMessage(`{"n": 1}`)})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
}

// failing is an embedder's action that fails, counting its executions.
type failing struct{ runs *atomic.Int32 }

func (failing) ConfigSchema() json.RawMessage { return nil }
func (failing) DefaultPorts(json.RawMessage) []workflow.Port {
	return []workflow.Port{{ID: "in", Dir: "in", Type: "flow"}, {ID: "out", Dir: "out", Type: "flow"}}
}
func (f failing) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return f, nil }
func (f failing) Execute(context.Context, *workflow.StepInput) (*workflow.Outcome, error) {
	f.runs.Add(1)
	return nil, errors.New("disk on fire")
}

// shout is an embedder's action: its output is its predecessor's output in
// capitals.
type shout struct{}

func (shout) ConfigSchema() json.RawMessage {
	return json.RawMessage(`{"type": "object", "additionalProperties": false}`)
}
func (shout) DefaultPorts(json.RawMessage) []workflow.Port {
	return []workflow.Port{{ID: "in", Dir: "in", Type: "flow"}, {ID: "out", Dir: "out", Type: "flow"}}
}
func (s shout) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return s, nil }
func (shout) Execute(_ context.Context, in *workflow.StepInput) (*workflow.Outcome, error) {
	var text string
	for _, l := range in.Node.In {
		if st := in.Steps[l.From.ID]; st != nil {
			_ = json.Unmarshal(st.Output, &text)
		}
	}
	return &workflow.Outcome{Output: strings.ToUpper(text)}, nil
}

func TestRun_EmbedderActions(t *testing.T) {
	var runs atomic.Int32
	h := newHarness(t, harnessOptions{register: func(r *workflow.Registry) {
		r.Register("shout", shout{})
		r.Register("fail", failing{&runs})
	}})
	spec := strings.Replace(linearSpec, `"actionId": "template", "config": {"template": "B: {{steps.a.output}}"}`, `"actionId": "shout"`, 1)
	v := h.await(h.start(spec, map[string]any{"word": "hey"}).ID, workflow.StatusCompleted)
	assert.Equal(t, "A: HEY", output(t, v.Output))

	spec = strings.Replace(linearSpec, `"actionId": "template", "config": {"template": "B: {{steps.a.output}}"}`, `"actionId": "fail"`, 1)
	v = h.await(h.start(spec, map[string]any{"word": "hey"}).ID, workflow.StatusFailed)
	assert.Equal(t, map[string]string{"start": "completed", "a": "completed", "b": "failed", "out": "cancelled"}, steps(v))
	require.NotNil(t, v.Error)
	assert.Equal(t, canvas.EINTERNAL, v.Error.Code)
	assert.NotContains(t, v.Error.Message, "disk on fire", "an internal cause is not shown")
	assert.Equal(t, int32(1), runs.Load(), "a failed step is not run again")

	_, err := h.canvases.CreateVersion(h.ctx, canvas.CreateVersionParams{PromptID: h.canvasID, IsWorkflow: true,
		WorkflowSpec: json.RawMessage(strings.Replace(linearSpec, `"actionId": "output"`, `"actionId": "shout", "config": {"x": 1}`, 1))})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "an embedder's config schema is checked")
}

func TestTransitions(t *testing.T) {
	all := []string{workflow.StatusPending, workflow.StatusRunning, workflow.StatusCompleted, workflow.StatusFailed,
		workflow.StatusRequiresAction, workflow.StatusCancelled, workflow.StatusTimeout, workflow.StatusWaitingForReview}
	triggers := []workflow.Trigger{workflow.TriggerStart, workflow.TriggerComplete, workflow.TriggerFail,
		workflow.TriggerAwaitReview, workflow.TriggerAwaitAction, workflow.TriggerReview, workflow.TriggerReject,
		workflow.TriggerResume, workflow.TriggerCancel, workflow.TriggerDeadline}
	legal := map[[2]string]string{}
	for _, tr := range workflow.Transitions() {
		legal[[2]string{tr.From, string(tr.Trigger)}] = tr.To
	}
	for _, from := range all {
		for _, tr := range triggers {
			to, err := workflow.Next(from, tr)
			if want, ok := legal[[2]string{from, string(tr)}]; ok {
				require.NoError(t, err, "%s --%s-->", from, tr)
				assert.Equal(t, want, to)
				continue
			}
			assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err), "%s --%s--> must be illegal", from, tr)
			if workflow.Terminal(from) {
				assert.Contains(t, canvas.ErrorMessage(err), "already ended")
			}
		}
	}
	for _, s := range []string{workflow.StatusCompleted, workflow.StatusCancelled, workflow.StatusFailed, workflow.StatusTimeout} {
		assert.True(t, workflow.Terminal(s), s)
	}
	for _, s := range []string{workflow.StatusWaitingForReview, workflow.StatusRequiresAction} {
		assert.True(t, workflow.Paused(s), s)
		assert.False(t, workflow.Terminal(s), s)
	}
}
