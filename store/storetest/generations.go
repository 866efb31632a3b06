package storetest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Generations stores one initializing generation of v per test case id,
// all under one new execution id, each with its job, and returns them.
func (f *fixture) Generations(v *canvas.Version, testCaseIDs ...string) ([]*testcase.Generation, []*queue.Job) {
	f.t.Helper()
	exec := uuid.NewString()
	gens := make([]*testcase.Generation, len(testCaseIDs))
	jobs := make([]*queue.Job, len(testCaseIDs))
	for i, id := range testCaseIDs {
		gens[i] = &testcase.Generation{WorkspaceID: v.WorkspaceID, TestCaseID: id, PromptID: v.PromptID,
			PromptVersionID: v.ID, ExecutionID: exec}
		jobs[i] = &queue.Job{WorkspaceID: v.WorkspaceID, Kind: testcase.JobKindGenerate}
	}
	require.NoError(f.t, f.s.CreateGenerations(f.ctx, gens, jobs))
	return gens, jobs
}

// finish records g completed with output, graded passed (nil: not graded).
func (f *fixture) finish(g *testcase.Generation, output string, passed *bool) {
	f.t.Helper()
	g.Status, g.Output, g.Passed = testcase.GenerationCompleted, &output, passed
	g.Usage, g.LatencyMs = &testcase.Usage{InputTokens: 3, OutputTokens: 2}, ptr(int64(7))
	g.Cost = &model.Cost{Input: 0.000003, Output: 0.00002, Total: 0.000023, Currency: model.Currency}
	require.NoError(f.t, f.s.FinishGeneration(f.ctx, g, nil))
}

func testGenerations(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWithJobs", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		tc1, tc2 := uuid.NewString(), uuid.NewString()
		gens, jobs := f.Generations(v, tc1, tc2)
		for i, g := range gens {
			require.NotEmpty(t, g.ID)
			assert.Equal(t, testcase.GenerationInitializing, g.Status)
			assert.False(t, g.CreatedAt.IsZero())
			got, err := f.s.GetGeneration(f.ctx, f.ws.ID, g.ID)
			require.NoError(t, err)
			assert.Equal(t, g, got)
			j, err := f.s.GetJob(f.ctx, jobs[i].ID)
			require.NoError(t, err)
			assert.Equal(t, g.ID, j.RefID, "each job serves its generation")
			assert.Equal(t, queue.StatusQueued, j.Status)
		}
		assert.Equal(t, gens[0].ExecutionID, gens[1].ExecutionID)

		err := f.s.CreateGenerations(f.ctx, []*testcase.Generation{{WorkspaceID: f.ws.ID}}, nil)
		requireCode(t, canvas.EINVALID, err)
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, _ := f.Generations(v, uuid.NewString())
		other := f.Workspace("other")
		_, err := f.s.GetGeneration(f.ctx, other.ID, gens[0].ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetGeneration(f.ctx, f.ws.ID, uuid.NewString())
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "List", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		tc1, tc2, tc3 := uuid.NewString(), uuid.NewString(), uuid.NewString()
		older, _ := f.Generations(v1, tc1, tc2)
		newer, _ := f.Generations(v2, tc1)

		got, err := f.s.ListGenerations(f.ctx, testcase.GenerationFilter{WorkspaceID: f.ws.ID,
			TestCaseIDs: []string{tc1, tc2, tc3}})
		require.NoError(t, err)
		assert.Equal(t, []string{newer[0].ID, older[0].ID}, ids(got[tc1], genID), "newest first")
		assert.Equal(t, []string{older[1].ID}, ids(got[tc2], genID))
		assert.NotContains(t, got, tc3, "a test case without generations has no key")

		got, err = f.s.ListGenerations(f.ctx, testcase.GenerationFilter{WorkspaceID: f.ws.ID,
			TestCaseIDs: []string{tc1, tc2}, PromptVersionIDs: []string{v1.ID}})
		require.NoError(t, err)
		assert.Equal(t, []string{older[0].ID}, ids(got[tc1], genID), "only generations of the versions")
		assert.Len(t, got[tc2], 1)

		got, err = f.s.ListGenerations(f.ctx, testcase.GenerationFilter{WorkspaceID: f.ws.ID})
		require.NoError(t, err)
		assert.Empty(t, got)
		other := f.Workspace("other")
		got, err = f.s.ListGenerations(f.ctx, testcase.GenerationFilter{WorkspaceID: other.ID,
			TestCaseIDs: []string{tc1}})
		require.NoError(t, err)
		assert.Empty(t, got, "scoped to the workspace")
	})
	run(t, newStore, "StartFinish", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, _ := f.Generations(v, uuid.NewString())
		g, err := f.s.StartGeneration(f.ctx, f.ws.ID, gens[0].ID)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationRunning, g.Status)
		_, err = f.s.StartGeneration(f.ctx, f.ws.ID, g.ID)
		require.NoError(t, err, "a running generation starts again after a crash")

		f.finish(g, "hello", ptr(true))
		require.NotNil(t, g.CompletedAt)
		got, err := f.s.GetGeneration(f.ctx, f.ws.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationCompleted, got.Status)
		assert.Equal(t, ptr("hello"), got.Output)
		assert.Equal(t, &testcase.Usage{InputTokens: 3, OutputTokens: 2}, got.Usage)
		assert.Equal(t, &model.Cost{Input: 0.000003, Output: 0.00002, Total: 0.000023, Currency: model.Currency}, got.Cost)
		assert.Equal(t, ptr(int64(7)), got.LatencyMs)
		assert.Equal(t, ptr(true), got.Passed)
		assert.Nil(t, got.Error)
		require.NotNil(t, got.CompletedAt)

		_, err = f.s.StartGeneration(f.ctx, f.ws.ID, g.ID)
		requireCode(t, canvas.ECONFLICT, err)
		requireCode(t, canvas.ECONFLICT, f.s.FinishGeneration(f.ctx, g, nil))
		g.Status = testcase.GenerationAborted
		requireCode(t, canvas.EINVALID, f.s.FinishGeneration(f.ctx, g, nil))
	})
	run(t, newStore, "FinishFailed", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, _ := f.Generations(v, uuid.NewString())
		g := gens[0]
		g.Status = testcase.GenerationFailed
		g.Error = &testcase.GenerationError{Code: canvas.EPROVIDER, Message: "The model back end failed."}
		require.NoError(t, f.s.FinishGeneration(f.ctx, g, nil))
		got, err := f.s.GetGeneration(f.ctx, f.ws.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, g.Error, got.Error)
		assert.Nil(t, got.Output)
		assert.Nil(t, got.Usage)
		assert.Nil(t, got.Cost, "no model answer, no cost")
		assert.Nil(t, got.Passed)
	})
	run(t, newStore, "Abort", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, jobs := f.Generations(v, uuid.NewString(), uuid.NewString())
		g, err := f.s.AbortGeneration(f.ctx, f.ws.ID, gens[0].ID)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationAborted, g.Status)
		require.NotNil(t, g.CompletedAt)
		j, err := f.s.GetJob(f.ctx, jobs[0].ID)
		require.NoError(t, err)
		assert.Equal(t, queue.StatusCancelled, j.Status, "the job is cancelled with it")
		j, err = f.s.GetJob(f.ctx, jobs[1].ID)
		require.NoError(t, err)
		assert.Equal(t, queue.StatusQueued, j.Status, "the other generation's job is untouched")

		_, err = f.s.AbortGeneration(f.ctx, f.ws.ID, g.ID)
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.StartGeneration(f.ctx, f.ws.ID, g.ID)
		requireCode(t, canvas.ECONFLICT, err)
		g.Status, g.Output = testcase.GenerationCompleted, ptr("late")
		requireCode(t, canvas.ECONFLICT, f.s.FinishGeneration(f.ctx, g, nil))
		got, err := f.s.GetGeneration(f.ctx, f.ws.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationAborted, got.Status, "a late outcome does not overwrite aborted")
		assert.Nil(t, got.Output)

		_, err = f.s.AbortGeneration(f.ctx, f.ws.ID, uuid.NewString())
		requireCode(t, canvas.ENOTFOUND, err)
		other := f.Workspace("other")
		_, err = f.s.AbortGeneration(f.ctx, other.ID, gens[1].ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "Execution", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, _ := f.Generations(v, uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString(),
			uuid.NewString())
		f.finish(gens[0], "a", ptr(true))
		f.finish(gens[1], "b", ptr(false))
		f.finish(gens[2], "c", nil)
		_, err := f.s.AbortGeneration(f.ctx, f.ws.ID, gens[3].ID)
		require.NoError(t, err)

		e, err := f.s.GetExecution(f.ctx, f.ws.ID, gens[0].ExecutionID)
		require.NoError(t, err)
		assert.Equal(t, gens[0].ExecutionID, e.ExecutionID)
		assert.Equal(t, v.PromptID, e.PromptID)
		assert.Equal(t, v.ID, e.PromptVersionID)
		assert.Equal(t, 5, e.Total)
		assert.Equal(t, testcase.ExecutionCounts{Initializing: 1, Completed: 3, Aborted: 1}, e.Counts)
		assert.Equal(t, 1, e.Passed)
		assert.Equal(t, 1, e.Failed)
		require.NotNil(t, e.PassRate)
		assert.InDelta(t, 0.5, *e.PassRate, 1e-9)
		assert.True(t, e.CreatedAt.Equal(gens[0].CreatedAt))
		assert.False(t, e.Terminal())

		ungraded, _ := f.Generations(v, uuid.NewString())
		e, err = f.s.GetExecution(f.ctx, f.ws.ID, ungraded[0].ExecutionID)
		require.NoError(t, err)
		assert.Nil(t, e.PassRate, "no pass rate while none is graded")

		_, err = f.s.GetExecution(f.ctx, f.ws.ID, uuid.NewString())
		requireCode(t, canvas.ENOTFOUND, err)
		other := f.Workspace("other")
		_, err = f.s.GetExecution(f.ctx, other.ID, gens[0].ExecutionID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "FinishOutboxJobCommitsWithTheOutcome", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		gens, _ := f.Generations(v, uuid.NewString(), uuid.NewString())
		var told *testcase.Generation
		jobID := uuid.NewString()
		g := gens[0]
		g.Status, g.Output = testcase.GenerationCompleted, ptr("hi")
		require.NoError(t, f.s.FinishGeneration(f.ctx, g, func(w *testcase.Generation) (*queue.Job, error) {
			told = w
			return &queue.Job{ID: jobID, WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: w.ID}, nil
		}))
		require.NotNil(t, told)
		require.NotNil(t, told.CompletedAt, "the outbox sees the generation as written")
		assert.Equal(t, testcase.GenerationCompleted, told.Status)
		got, err := f.s.GetGeneration(f.ctx, f.ws.ID, g.ID)
		require.NoError(t, err)
		assert.Equal(t, got, told)
		assert.Equal(t, got, g)
		j := f.GetJob(jobID)
		assert.Equal(t, g.ID, j.RefID)
		assert.Equal(t, queue.StatusQueued, j.Status)

		// A finish whose job cannot be written, or whose outbox fails,
		// records nothing.
		other := gens[1]
		other.Status, other.Output = testcase.GenerationCompleted, ptr("hi")
		badID := uuid.NewString()
		requireCode(t, canvas.EINVALID, f.s.FinishGeneration(f.ctx, other, func(w *testcase.Generation) (*queue.Job, error) {
			return &queue.Job{ID: badID, WorkspaceID: f.ws.ID, RefID: w.ID}, nil // no kind
		}))
		requireCode(t, canvas.ECONFLICT, f.s.FinishGeneration(f.ctx, other, func(*testcase.Generation) (*queue.Job, error) {
			return nil, canvas.Errorf(canvas.ECONFLICT, "no outbox today")
		}))
		_, err = f.s.GetJob(f.ctx, badID)
		requireCode(t, canvas.ENOTFOUND, err)
		got, err = f.s.GetGeneration(f.ctx, f.ws.ID, other.ID)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationInitializing, got.Status, "the outcome failed with its job")

		// A finish that is CONFLICT (already finished) asks for no job.
		called := false
		requireCode(t, canvas.ECONFLICT, f.s.FinishGeneration(f.ctx, g, func(*testcase.Generation) (*queue.Job, error) {
			called = true
			return nil, nil
		}))
		assert.False(t, called)
	})
}

func genID(g *testcase.Generation) string { return g.ID }
