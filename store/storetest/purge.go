package storetest

import (
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cutoff returns an instant after every write made before the call and
// before every write made after it: it waits, without a fixed sleep, until
// the clock has moved past it. The store's clock is the wall clock.
func (f *fixture) Cutoff() time.Time {
	f.t.Helper()
	prev := time.Now()
	var cut time.Time
	require.Eventually(f.t, func() bool { cut = time.Now(); return cut.After(prev) }, time.Second, time.Microsecond)
	require.Eventually(f.t, func() bool { return time.Now().After(cut) }, time.Second, time.Microsecond)
	return cut
}

// purgeAll calls purge with limit until it deletes less than limit, and
// returns what each call deleted.
func purgeAll(t *testing.T, limit int, purge func(limit int) (int, error)) []int {
	t.Helper()
	var batches []int
	for {
		n, err := purge(limit)
		require.NoError(t, err)
		batches = append(batches, n)
		if n < limit {
			return batches
		}
	}
}

// requireGone fails unless get answers NOT_FOUND for every id.
func requireGone(t *testing.T, get func(id string) error, ids ...string) {
	t.Helper()
	for _, id := range ids {
		requireCode(t, canvas.ENOTFOUND, get(id))
	}
}

// requireKept fails unless get finds every id.
func requireKept(t *testing.T, get func(id string) error, ids ...string) {
	t.Helper()
	for _, id := range ids {
		require.NoError(t, get(id), "record %s is kept", id)
	}
}

func testPurge(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ScheduleJobOnce", func(t *testing.T, f *fixture) {
		job := func() *queue.Job { return &queue.Job{Kind: "maintenance", RefID: "maintenance"} }
		first := job()
		ok, err := f.s.ScheduleJob(f.ctx, first, "")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, queue.StatusQueued, f.GetJob(first.ID).Status)

		ok, err = f.s.ScheduleJob(f.ctx, job(), "")
		require.NoError(t, err)
		assert.False(t, ok, "a queued job of the kind is already there")
		claimed := f.Claim("w", 10, longLease, "maintenance")
		require.Len(t, claimed, 1)
		ok, err = f.s.ScheduleJob(f.ctx, job(), "")
		require.NoError(t, err)
		assert.False(t, ok, "a running one counts too")

		other := &queue.Job{Kind: "maintenance", RefID: "elsewhere"}
		ok, err = f.s.ScheduleJob(f.ctx, other, "")
		require.NoError(t, err)
		assert.True(t, ok, "another RefID is another chain")

		next := job()
		next.RunAt = time.Now().Add(time.Hour)
		ok, err = f.s.ScheduleJob(f.ctx, next, first.ID)
		require.NoError(t, err)
		assert.True(t, ok, "the running job schedules its successor")
		assert.Equal(t, queue.StatusQueued, f.GetJob(next.ID).Status)
		ok, err = f.s.ScheduleJob(f.ctx, job(), first.ID)
		require.NoError(t, err)
		assert.False(t, ok, "a re-run of the same job finds its successor")

		require.NoError(t, f.s.CompleteJob(f.ctx, first.ID, "w"))
		n, err := f.s.CancelJobs(f.ctx, "maintenance")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		ok, err = f.s.ScheduleJob(f.ctx, job(), "")
		require.NoError(t, err)
		assert.True(t, ok, "ended jobs do not count")
	})
	run(t, newStore, "PurgeJobs", func(t *testing.T, f *fixture) {
		getJob := func(id string) error { _, err := f.s.GetJob(f.ctx, id); return err }
		done, failed, cancelled := f.Job("k", "done", time.Time{}), f.Job("k", "failed", time.Time{}), f.Job("k", "cancelled", time.Time{})
		require.Len(t, f.Claim("w", 10, longLease, "k"), 3)
		require.NoError(t, f.s.CompleteJob(f.ctx, done.ID, "w"))
		require.NoError(t, f.s.FailJob(f.ctx, queue.FailJobParams{ID: failed.ID, Owner: "w", LastError: "boom"}))
		_, err := f.s.CancelJobs(f.ctx, "cancelled")
		require.NoError(t, err)
		queued := f.Job("k", "queued", time.Now().Add(time.Hour))
		running := f.Job("live", "running", time.Time{})
		require.Len(t, f.Claim("w", 10, longLease, "live"), 1)
		cut := f.Cutoff()
		recent := f.Job("recent", "recent", time.Time{})
		require.Len(t, f.Claim("w", 10, longLease, "recent"), 1)
		require.NoError(t, f.s.CompleteJob(f.ctx, recent.ID, "w"))

		n, err := f.s.PurgeJobs(f.ctx, cut, 0)
		require.NoError(t, err)
		assert.Zero(t, n, "a zero limit deletes nothing")
		assert.Equal(t, []int{2, 1}, purgeAll(t, 2, func(limit int) (int, error) { return f.s.PurgeJobs(f.ctx, cut, limit) }))
		requireGone(t, getJob, done.ID, failed.ID, cancelled.ID)
		requireKept(t, getJob, queued.ID, running.ID, recent.ID)
		assert.Equal(t, queue.StatusRunning, f.GetJob(running.ID).Status)
	})
	run(t, newStore, "PurgeDeliveries", func(t *testing.T, f *fixture) {
		get := func(id string) error { _, err := f.s.GetDelivery(f.ctx, f.ws.ID, id); return err }
		end := func(o webhook.Outgoing, status string) string {
			id := o.Delivery.ID
			require.NoError(t, f.s.RecordAttempt(f.ctx, webhook.AttemptOutcome{WorkspaceID: f.ws.ID, DeliveryID: id,
				Attempt: &webhook.LoggedAttempt{At: time.Now().UTC(), StatusCode: ptr(200)}, Status: status}))
			return id
		}
		var old []string
		for range 3 {
			old = append(old, end(f.Delivery("", webhook.EventCompletionSucceeded), webhook.StatusSucceeded))
		}
		old = append(old, end(f.Delivery("", webhook.EventCompletionFailed), webhook.StatusFailed))
		pending := f.Delivery("", webhook.EventCompletionSucceeded).Delivery.ID
		retrying := end(f.Delivery("", webhook.EventCompletionSucceeded), webhook.StatusPending)
		cut := f.Cutoff()
		recent := end(f.Delivery("", webhook.EventCompletionSucceeded), webhook.StatusSucceeded)

		assert.Equal(t, []int{3, 1}, purgeAll(t, 3, func(limit int) (int, error) { return f.s.PurgeDeliveries(f.ctx, cut, limit) }))
		requireGone(t, get, old...)
		requireKept(t, get, pending, retrying, recent)
		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
		require.NoError(t, err)
		assert.Len(t, page.Items, 3, "the log lists what is kept")
	})
	run(t, newStore, "PurgeRuns", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		get := func(id string) error { _, err := f.s.GetRun(f.ctx, f.ws.ID, id); return err }
		sync := func() string {
			r := f.Run(v)
			r.Async, r.Status = false, completion.StatusCompleted
			require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
			return r.ID
		}
		async := func(finish string) string {
			r := f.Run(v)
			require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r,
				Job: &queue.Job{WorkspaceID: f.ws.ID, Kind: completion.JobKindCompletion}}))
			if finish == "" {
				return r.ID
			}
			_, err := f.s.StartRun(f.ctx, f.ws.ID, r.ID)
			require.NoError(t, err)
			if finish != completion.StatusRunning {
				r.Status = finish
				require.NoError(t, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r}))
			}
			return r.ID
		}
		old := []string{sync(), sync(), async(completion.StatusFailed), async(completion.StatusCompleted)}
		queued, running := async(""), async(completion.StatusRunning)
		cut := f.Cutoff()
		recent := []string{sync(), async(completion.StatusFailed)}

		assert.Equal(t, []int{3, 1}, purgeAll(t, 3, func(limit int) (int, error) { return f.s.PurgeRuns(f.ctx, cut, limit) }))
		requireGone(t, get, old...)
		requireKept(t, get, append(recent, queued, running)...)
	})
	run(t, newStore, "PurgeWorkflowRuns", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		get := func(id string) error { _, err := f.s.GetWorkflowRun(f.ctx, f.ws.ID, id); return err }
		moved := func(to ...string) string {
			r := f.CreateWorkflowRun(f.WorkflowRun(v))
			from := r.Status
			for _, status := range to {
				f.ChangeWorkflowRun(&workflow.Change{WorkspaceID: f.ws.ID, RunID: r.ID, From: from, To: status})
				from = status
			}
			return r.ID
		}
		old := []string{
			moved(workflow.StatusRunning, workflow.StatusCompleted),
			moved(workflow.StatusRunning, workflow.StatusFailed),
			moved(workflow.StatusCancelled),
			moved(workflow.StatusRunning, workflow.StatusTimeout),
		}
		live := []string{
			moved(),
			moved(workflow.StatusRunning),
			moved(workflow.StatusRunning, workflow.StatusWaitingForReview),
			moved(workflow.StatusRunning, workflow.StatusRequiresAction),
		}
		cut := f.Cutoff()
		recent := moved(workflow.StatusCancelled)

		assert.Equal(t, []int{3, 1}, purgeAll(t, 3, func(limit int) (int, error) { return f.s.PurgeWorkflowRuns(f.ctx, cut, limit) }))
		requireGone(t, get, old...)
		requireKept(t, get, append(live, recent)...)
		kept := f.GetWorkflowRun(recent)
		assert.Equal(t, []string{"start", "draft", "end"}, ids(kept.Steps, stepID), "a kept run keeps its steps")

		again := f.CreateWorkflowRun(&workflow.Run{ID: old[0], WorkspaceID: f.ws.ID, CanvasID: v.PromptID,
			VersionID: v.ID, Environment: workflow.EnvAPI, Status: workflow.StatusPending, CreatedBy: "alice",
			Input: map[string]workflow.InputValue{}, Deadline: time.Now().Add(time.Hour),
			Steps: []*workflow.Step{wfStep("only", 0, "input")}})
		assert.Equal(t, []string{"only"}, ids(f.GetWorkflowRun(again.ID).Steps, stepID),
			"the steps of a purged run went with it")
	})
}
