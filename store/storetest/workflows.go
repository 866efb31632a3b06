package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WorkflowRun returns a pending run of v with the steps of a three-node
// graph (start, draft, end), not yet stored.
func (f *fixture) WorkflowRun(v *canvas.Version) *workflow.Run {
	return &workflow.Run{
		WorkspaceID: v.WorkspaceID, CanvasID: v.PromptID, VersionID: v.ID,
		Environment: workflow.EnvCraftPreview, Status: workflow.StatusPending,
		Input: map[string]workflow.InputValue{
			"topic": {Name: "topic", Type: "string", Required: true, Value: "owls"},
		},
		Steps: []*workflow.Step{
			wfStep("start", 0, "input"), wfStep("draft", 1, "llm"), wfStep("end", 2, "output"),
		},
		CreatedBy: "alice",
		Deadline:  time.Date(2031, 1, 2, 3, 4, 5, 6, time.UTC),
	}
}

// CreateWorkflowRun stores r with jobs.
func (f *fixture) CreateWorkflowRun(r *workflow.Run, jobs ...*queue.Job) *workflow.Run {
	f.t.Helper()
	require.NoError(f.t, f.s.CreateWorkflowRun(f.ctx, r, jobs))
	return r
}

// GetWorkflowRun reads a run of the fixture's workspace that must exist.
func (f *fixture) GetWorkflowRun(id string) *workflow.Run {
	f.t.Helper()
	r, err := f.s.GetWorkflowRun(f.ctx, f.ws.ID, id)
	require.NoError(f.t, err)
	return r
}

// ChangeWorkflowRun applies a change that must succeed.
func (f *fixture) ChangeWorkflowRun(c *workflow.Change) *workflow.Run {
	f.t.Helper()
	r, err := f.s.ChangeWorkflowRun(f.ctx, c)
	require.NoError(f.t, err)
	return r
}

// wfStep is a pending step of node id at position seq.
func wfStep(id string, seq int, action string) *workflow.Step {
	return &workflow.Step{ID: id, Name: "Node " + id, ActionID: action, Status: workflow.StepPending, Seq: seq}
}

func stepID(s *workflow.Step) string { return s.ID }

// WorkflowNotification returns a delivery of a notification of r to an
// example URL, not yet written.
func (f *fixture) WorkflowNotification(r *workflow.Run) webhook.Outgoing {
	f.t.Helper()
	o, err := webhook.NewOutgoing(r.WorkspaceID, r.ID, webhook.Delivery{URL: "https://example.com/hook",
		Event: webhook.Event{Type: webhook.EventWorkflowRunCompleted, Data: json.RawMessage(`{}`)}})
	require.NoError(f.t, err)
	return o
}

func testWorkflows(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "RoundTrip", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.ExternalID = "exec-1"
		r.Environment, r.Status = workflow.EnvAPI, workflow.StatusRunning
		r.Input["files"] = workflow.InputValue{Name: "files", Type: "file", Value: 2.5,
			Files: []workflow.InputFile{{FileURL: "https://example.com/a.pdf", Name: "a.pdf", MimeType: "application/pdf"}}}
		r.StartNodeID, r.EndNodeID, r.OutputNodeID = "start", "end", "draft"
		r.Error = &workflow.Error{Code: canvas.ETIMEOUT, Message: "late"}
		r.WebhookURL = "https://example.com/hook"
		r.ForwardHeaders = []webhook.Header{{Name: "tenant", Value: "t1"}}
		r.ApplicationID = "app-1"
		started := time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC) // stores keep microseconds
		done := started.Add(time.Second)
		r.Steps[0].Status, r.Steps[0].StartedAt, r.Steps[0].CompletedAt = workflow.StepCompleted, &started, &done
		r.Steps[0].Input = json.RawMessage(`{"topic":"owls"}`)
		r.Steps[0].Output = json.RawMessage(`{"topic":"owls"}`)
		r.Steps[0].Ports = []string{"out"}
		r.Steps[1].Status, r.Steps[1].StartedAt = workflow.StepFailed, &started
		r.Steps[1].Error = &workflow.Error{Code: canvas.EPROVIDER, Message: "down"}
		r.Steps[1].Metadata = json.RawMessage(`{"usage":{"inputTokens":3,"outputTokens":1}}`)
		r.Steps[2].Ports = []string{}
		job := &queue.Job{Kind: workflow.JobKindRun}
		f.CreateWorkflowRun(r, job)
		require.NotEmpty(t, r.ID)
		assert.False(t, r.CreatedAt.IsZero())
		assert.Equal(t, r.CreatedAt, r.UpdatedAt)
		assert.Nil(t, r.CompletedAt, "a running run has not completed")

		got := f.GetWorkflowRun(r.ID)
		assert.Equal(t, r, got, "every field is stored")
		assert.Nil(t, got.Steps[1].Ports, "nil ports (all of them) stay nil")
		assert.Equal(t, []string{}, got.Steps[2].Ports, "no port selected stays distinct from all")

		j := f.GetJob(job.ID)
		assert.Equal(t, r.ID, j.RefID, "a job without a RefID serves the run")
		assert.Equal(t, f.ws.ID, j.WorkspaceID)
		assert.Equal(t, queue.StatusQueued, j.Status)
	})
	run(t, newStore, "CreateKeepsIDAndSetsCompletedAt", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.ID, r.Status = "3f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", workflow.StatusFailed
		f.CreateWorkflowRun(r)
		assert.Equal(t, "3f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", r.ID, "a given id is kept")
		require.NotNil(t, r.CompletedAt)
		got := f.GetWorkflowRun(r.ID)
		require.NotNil(t, got.CompletedAt, "a run created terminal has completed")
		assert.Equal(t, r.CreatedAt, *got.CompletedAt)
		assert.Equal(t, "", got.ExternalID)
	})
	run(t, newStore, "CreateIsAtomic", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.ID = "4f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
		good := &queue.Job{Kind: workflow.JobKindRun}
		err := f.s.CreateWorkflowRun(f.ctx, r, []*queue.Job{good, {}}) // the second job has no kind
		requireCode(t, canvas.EINVALID, err)
		_, err = f.s.GetWorkflowRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetJob(f.ctx, good.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ByExternalID", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.ExternalID = "exec-42"
		f.CreateWorkflowRun(r)
		plain := f.CreateWorkflowRun(f.WorkflowRun(v))

		got := f.GetWorkflowRun("exec-42")
		assert.Equal(t, r.ID, got.ID)
		assert.Equal(t, "exec-42", got.ExternalID)
		assert.Equal(t, []string{"start", "draft", "end"}, ids(got.Steps, stepID))
		assert.Equal(t, plain.ID, f.GetWorkflowRun(plain.ID).ID, "a run without an external id is found by id")

		taken := f.WorkflowRun(v)
		taken.ExternalID = "exec-42"
		requireCode(t, canvas.ECONFLICT, f.s.CreateWorkflowRun(f.ctx, taken, nil))
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.ExternalID = "exec-7"
		f.CreateWorkflowRun(r)
		other := f.Workspace("other")
		for _, id := range []string{r.ID, "exec-7"} {
			_, err := f.s.GetWorkflowRun(f.ctx, other.ID, id)
			requireCode(t, canvas.ENOTFOUND, err)
		}
		_, err := f.s.GetWorkflowRun(f.ctx, f.ws.ID, "5f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b")
		requireCode(t, canvas.ENOTFOUND, err)
		err = f.s.SaveWorkflowSteps(f.ctx, other.ID, r.ID, []*workflow.Step{wfStep("x", 9, "template")})
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ChangeWorkflowRun(f.ctx, &workflow.Change{WorkspaceID: other.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusRunning})
		requireCode(t, canvas.ENOTFOUND, err)
		assert.Equal(t, workflow.StatusPending, f.GetWorkflowRun(r.ID).Status)
		assert.Len(t, f.GetWorkflowRun(r.ID).Steps, 3)
	})
	run(t, newStore, "StepsInSeqOrder", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		r.Steps = []*workflow.Step{wfStep("z", 2, "output"), wfStep("a", 0, "input"), wfStep("m", 1, "template")}
		f.CreateWorkflowRun(r)
		assert.Equal(t, []string{"a", "m", "z"}, ids(f.GetWorkflowRun(r.ID).Steps, stepID))
		require.NoError(t, f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, []*workflow.Step{wfStep("b", 1, "template")}))
		assert.Equal(t, []string{"a", "b", "m", "z"}, ids(f.GetWorkflowRun(r.ID).Steps, stepID),
			"equal positions are ordered by id")
	})
	run(t, newStore, "SaveStepsUpserts", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v))
		at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		draft := r.Steps[1].Clone()
		draft.Status, draft.StartedAt = workflow.StepRunning, &at
		draft.Input = json.RawMessage(`{"prompt":"write"}`)
		require.NoError(t, f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, []*workflow.Step{draft}))
		got := f.GetWorkflowRun(r.ID)
		assert.Equal(t, draft, got.Steps[1])
		assert.Equal(t, r.Steps[0], got.Steps[0], "other steps are untouched")

		draft = draft.Clone()
		draft.Status, draft.CompletedAt = workflow.StepCompleted, &at
		draft.Output = json.RawMessage(`"an owl"`)
		extra := wfStep("late", 3, "template")
		require.NoError(t, f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, []*workflow.Step{draft, extra}))
		got = f.GetWorkflowRun(r.ID)
		require.Len(t, got.Steps, 4)
		assert.Equal(t, draft, got.Steps[1], "the stored step is replaced")
		assert.Equal(t, extra, got.Steps[3], "a new step is inserted")
		assert.Equal(t, workflow.StatusPending, got.Status, "saving steps leaves the status alone")
		require.NoError(t, f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, nil))
	})
	run(t, newStore, "SaveStepsRefusedWhenEnded", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v))
		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusCancelled})
		late := r.Steps[0].Clone()
		late.Status = workflow.StepCompleted
		err := f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, []*workflow.Step{late, wfStep("new", 5, "template")})
		requireCode(t, canvas.ECONFLICT, err)
		got := f.GetWorkflowRun(r.ID)
		assert.Equal(t, r.Steps, got.Steps, "nothing is written to an ended run")

		err = f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, "6f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", []*workflow.Step{late})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ConcurrentStepSavesDurable", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.WorkflowRun(v)
		const n = 48
		r.Steps = nil
		for i := range n {
			r.Steps = append(r.Steps, wfStep(fmt.Sprintf("n%02d", i), i, "template"))
		}
		f.CreateWorkflowRun(r)
		ended := f.WorkflowRun(v)
		ended.Status = workflow.StatusCompleted
		f.CreateWorkflowRun(ended)

		errs := make([]error, n+1)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				s := r.Steps[i].Clone()
				for _, status := range []string{workflow.StepRunning, workflow.StepCompleted} {
					s.Status = status
					s.Output = json.RawMessage(fmt.Sprintf(`{"i":%d,"status":%q}`, i, status))
					if errs[i] = f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, r.ID, []*workflow.Step{s}); errs[i] != nil {
						return
					}
				}
			})
		}
		wg.Go(func() { // a write refused among them fails alone
			errs[n] = f.s.SaveWorkflowSteps(f.ctx, f.ws.ID, ended.ID, []*workflow.Step{wfStep("start", 0, "input")})
		})
		wg.Wait()
		requireCode(t, canvas.ECONFLICT, errs[n])
		got := f.GetWorkflowRun(r.ID)
		require.Len(t, got.Steps, n)
		for i, s := range got.Steps {
			require.NoError(t, errs[i])
			assert.Equal(t, workflow.StepCompleted, s.Status, "step %s", s.ID)
			assert.JSONEq(t, fmt.Sprintf(`{"i":%d,"status":"completed"}`, i), string(s.Output))
		}
	})
	testWorkflowChanges(t, newStore)
	testWorkflowLists(t, newStore)
}

func runID(r *workflow.Run) string { return r.ID }

func testWorkflowLists(t *testing.T, newStore func(t *testing.T) store.Store) {
	list := func(f *fixture, filter workflow.RunFilter) ([]*workflow.Run, int) {
		f.t.Helper()
		runs, total, err := f.s.ListWorkflowRuns(f.ctx, f.ws.ID, filter)
		require.NoError(f.t, err)
		return runs, total
	}
	run(t, newStore, "ListNewestFirstWithoutSteps", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		v := f.Version(f.Canvas("c", p, "alice"), "hello")
		other := f.Version(f.Canvas("d", p, "alice"), "hello")
		var want []string
		for range 5 {
			want = append([]string{f.CreateWorkflowRun(f.WorkflowRun(v)).ID}, want...)
		}
		f.CreateWorkflowRun(f.WorkflowRun(other))

		runs, total := list(f, workflow.RunFilter{CanvasID: v.PromptID, Limit: 10})
		assert.Equal(t, 5, total)
		assert.Equal(t, want, ids(runs, runID), "newest first, ties in reverse order of creation")
		stored := f.GetWorkflowRun(runs[0].ID)
		stored.Steps = nil
		assert.Equal(t, stored, runs[0], "every field but the steps")

		runs, total = list(f, workflow.RunFilter{CanvasID: v.PromptID, Limit: 2, Offset: 2})
		assert.Equal(t, 5, total, "the total counts every page")
		assert.Equal(t, want[2:4], ids(runs, runID))
		runs, total = list(f, workflow.RunFilter{CanvasID: v.PromptID, Limit: 2, Offset: 6})
		assert.Equal(t, 5, total)
		assert.Empty(t, runs, "past the end")

		_, total = list(f, workflow.RunFilter{Limit: 10})
		assert.Equal(t, 6, total, "no canvas: every run of the workspace")
	})
	run(t, newStore, "ListByStatus", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		pending := f.CreateWorkflowRun(f.WorkflowRun(v))
		waiting := f.CreateWorkflowRun(f.WorkflowRun(v))
		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: waiting.ID,
			From: workflow.StatusPending, To: workflow.StatusWaitingForReview})

		runs, total := list(f, workflow.RunFilter{CanvasID: v.PromptID, Status: workflow.StatusWaitingForReview, Limit: 10})
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{waiting.ID}, ids(runs, runID))
		runs, _ = list(f, workflow.RunFilter{CanvasID: v.PromptID, Status: workflow.StatusPending, Limit: 10})
		assert.Equal(t, []string{pending.ID}, ids(runs, runID))
		runs, total = list(f, workflow.RunFilter{CanvasID: v.PromptID, Status: workflow.StatusCompleted, Limit: 10})
		assert.Equal(t, 0, total)
		assert.Empty(t, runs)
	})
	run(t, newStore, "ListOtherWorkspaceEmpty", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		f.CreateWorkflowRun(f.WorkflowRun(v))
		other := f.Workspace("other")
		runs, total, err := f.s.ListWorkflowRuns(f.ctx, other.ID, workflow.RunFilter{CanvasID: v.PromptID, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 0, total)
		assert.Empty(t, runs)
	})
}

func testWorkflowChanges(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ChangeMovesStatus", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v))
		start := r.Steps[0].Clone()
		start.Status = workflow.StepCompleted
		got := f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusRunning, Steps: []*workflow.Step{start}})
		assert.Equal(t, workflow.StatusRunning, got.Status)
		assert.Nil(t, got.CompletedAt, "running is not terminal")
		assert.Equal(t, "", got.OutputNodeID)
		assert.Nil(t, got.Error)
		assert.Equal(t, start, got.Steps[0], "the change's steps are written")
		assert.Equal(t, got, f.GetWorkflowRun(r.ID), "the run is returned as it is stored")
	})
	run(t, newStore, "ChangeWrongFromConflicts", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v), &queue.Job{Kind: workflow.JobKindRun})
		before := f.GetWorkflowRun(r.ID)
		done := r.Steps[2].Clone()
		done.Status = workflow.StepCompleted
		next := &queue.Job{ID: "7f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", Kind: workflow.JobKindRun}
		_, err := f.s.ChangeWorkflowRun(f.ctx, &workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusRunning, To: workflow.StatusCompleted, OutputNodeID: "end",
			Error: &workflow.Error{Code: "X", Message: "x"}, Steps: []*workflow.Step{done},
			Jobs: []*queue.Job{next}, CancelKinds: workflow.JobKinds()})
		requireCode(t, canvas.ECONFLICT, err)
		assert.Equal(t, before, f.GetWorkflowRun(r.ID), "nothing is written")
		_, err = f.s.GetJob(f.ctx, next.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		jobs := f.Claim("w", 10, longLease, workflow.JobKinds()...)
		require.Len(t, jobs, 1, "the run's job was not cancelled")
		assert.Equal(t, r.ID, jobs[0].RefID)
	})
	run(t, newStore, "ChangeToTerminal", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v))
		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusRunning})
		runErr := &workflow.Error{Code: canvas.EPROVIDER, Message: "down"}
		got := f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusRunning, To: workflow.StatusFailed, OutputNodeID: "draft", Error: runErr})
		assert.Equal(t, workflow.StatusFailed, got.Status)
		require.NotNil(t, got.CompletedAt, "a terminal run has completed")
		assert.Equal(t, got.UpdatedAt, *got.CompletedAt)
		assert.False(t, got.UpdatedAt.Before(r.CreatedAt))
		assert.Equal(t, "draft", got.OutputNodeID)
		assert.Equal(t, runErr, got.Error)
		assert.Equal(t, got, f.GetWorkflowRun(r.ID))

		_, err := f.s.ChangeWorkflowRun(f.ctx, &workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusRunning, To: workflow.StatusCancelled})
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "ChangeCancelsOnlyTheRunsWorkflowJobs", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		a := f.CreateWorkflowRun(f.WorkflowRun(v), &queue.Job{Kind: workflow.JobKindRun})
		b := f.CreateWorkflowRun(f.WorkflowRun(v), &queue.Job{Kind: workflow.JobKindRun})
		own := f.Job(workflow.JobKindRun, a.ID, time.Time{})
		claimed := f.Claim("w", 10, longLease, workflow.JobKindRun) // every run job: now running
		require.Len(t, claimed, 3)
		var running *queue.Job
		for _, j := range claimed {
			if j.RefID == a.ID && j.ID != own.ID {
				running = j
			}
		}
		require.NotNil(t, running)
		deadline := f.Job(workflow.JobKindDeadline, a.ID, time.Now().Add(time.Hour))
		otherKind := f.Job("completion.run", a.ID, time.Time{})
		var bJob *queue.Job
		for _, j := range claimed {
			if j.RefID == b.ID {
				bJob = j
			}
		}
		require.NotNil(t, bJob)
		notify := &queue.Job{Kind: "workflow.test.notify"}

		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: a.ID,
			From: workflow.StatusPending, To: workflow.StatusCancelled,
			CancelKinds: workflow.JobKinds(), ExceptJobID: own.ID, Jobs: []*queue.Job{notify}})

		got := f.GetJob(running.ID)
		assert.Equal(t, queue.StatusCancelled, got.Status, "the running run job is cancelled")
		assert.Equal(t, "", got.LeaseOwner, "its lease is cleared")
		assert.Nil(t, got.LeaseUntil)
		assert.Equal(t, queue.StatusCancelled, f.GetJob(deadline.ID).Status, "the queued deadline job is cancelled")
		assert.Equal(t, queue.StatusRunning, f.GetJob(own.ID).Status, "the caller's own job is left")
		assert.Equal(t, queue.StatusQueued, f.GetJob(otherKind.ID).Status, "a job of another kind is left")
		assert.Equal(t, queue.StatusRunning, f.GetJob(bJob.ID).Status, "another run's job is left")
		n := f.GetJob(notify.ID)
		assert.Equal(t, queue.StatusQueued, n.Status, "the change's job is enqueued after the cancel")
		assert.Equal(t, a.ID, n.RefID)
		assert.Equal(t, f.ws.ID, n.WorkspaceID)
	})
	run(t, newStore, "ChangeWritesNotification", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v), &queue.Job{Kind: workflow.JobKindRun})
		paused := f.WorkflowNotification(r)
		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusRunning, Notify: []webhook.Outgoing{paused}})
		st, _ := f.DeliveryStatus(paused.Delivery.ID)
		assert.Equal(t, webhook.StatusPending, st, "the delivery is written with the change")

		stale := f.WorkflowNotification(r)
		_, err := f.s.ChangeWorkflowRun(f.ctx, &workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusCompleted, Notify: []webhook.Outgoing{stale}})
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.GetDelivery(f.ctx, f.ws.ID, stale.Delivery.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetJob(f.ctx, stale.Job.ID)
		requireCode(t, canvas.ENOTFOUND, err)

		done := f.WorkflowNotification(r)
		f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusRunning, To: workflow.StatusCompleted, CancelKinds: workflow.JobKinds(),
			Notify: []webhook.Outgoing{done}})
		for _, o := range []webhook.Outgoing{paused, done} {
			assert.Equal(t, queue.StatusQueued, f.GetJob(o.Job.ID).Status,
				"a delivery serving the run is not one of its workflow jobs: the cancel leaves it")
			st, _ := f.DeliveryStatus(o.Delivery.ID)
			assert.Equal(t, webhook.StatusPending, st)
		}
	})
	run(t, newStore, "ChangeIsAtomic", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.CreateWorkflowRun(f.WorkflowRun(v), &queue.Job{Kind: workflow.JobKindRun})
		before := f.GetWorkflowRun(r.ID)
		done := r.Steps[0].Clone()
		done.Status = workflow.StepCompleted
		good := &queue.Job{ID: "8f0c1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", Kind: workflow.JobKindDeadline}
		_, err := f.s.ChangeWorkflowRun(f.ctx, &workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID,
			From: workflow.StatusPending, To: workflow.StatusRunning, Steps: []*workflow.Step{done},
			CancelKinds: workflow.JobKinds(), Jobs: []*queue.Job{good, {}}}) // the second job has no kind
		requireCode(t, canvas.EINVALID, err)
		assert.Equal(t, before, f.GetWorkflowRun(r.ID), "neither status nor steps are written")
		_, err = f.s.GetJob(f.ctx, good.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		require.Len(t, f.Claim("w", 10, longLease, workflow.JobKinds()...), 1, "no job was cancelled")
	})
}
