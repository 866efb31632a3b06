package storetest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Experiment stores a queued experiment of v's canvas over v, with
// testCases test cases (new ids) and one repetition, and its job.
func (f *fixture) Experiment(v *canvas.Version, testCases int) (*experiment.Experiment, *queue.Job) {
	f.t.Helper()
	ids := make([]string, testCases)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	e := &experiment.Experiment{WorkspaceID: v.WorkspaceID, PromptID: v.PromptID, TestCaseIDs: ids,
		Request: experiment.Request{PromptID: v.PromptID, VersionIDs: []string{v.ID}, Repetitions: 1,
			Evaluators: []experiment.Evaluator{{Name: "exact", Type: "exact"}}},
		Versions: []experiment.Version{{VersionID: v.ID}}, Progress: experiment.Progress{Total: testCases},
		CreatedBy: "alice", Runner: experiment.Runner{UserID: "alice"}}
	j := &queue.Job{WorkspaceID: v.WorkspaceID, Kind: experiment.JobKindRun}
	require.NoError(f.t, f.s.CreateExperiment(f.ctx, e, j))
	return e, j
}

// result returns a passed result of e's first version for test case i.
func result(e *experiment.Experiment, i int, passed bool) *experiment.Result {
	out := "answer"
	return &experiment.Result{WorkspaceID: e.WorkspaceID, ExperimentID: e.ID, TestCaseID: e.TestCaseIDs[i],
		VersionID: e.Versions[0].VersionID, Repetition: 1, RunID: ptr(uuid.NewString()), Output: &out, LatencyMs: 12,
		Usage: model.Usage{InputTokens: 3, OutputTokens: 4},
		Cost:  &model.Cost{Input: 0.1, Output: 0.2, Total: 0.3, Currency: model.Currency},
		Scores: []experiment.Score{{Evaluator: "exact", Score: ptr(map[bool]float64{true: 1}[passed]),
			Passed: ptr(passed)}},
		Verdict: ptr(passed)}
}

func testExperiments(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWithJob", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		e, j := f.Experiment(v, 2)
		require.NotEmpty(t, e.ID)
		assert.Equal(t, experiment.StatusQueued, e.Status)
		got, err := f.s.GetExperiment(f.ctx, f.ws.ID, e.ID)
		require.NoError(t, err)
		assert.Equal(t, e.Request, got.Request)
		assert.Equal(t, e.TestCaseIDs, got.TestCaseIDs)
		assert.Equal(t, experiment.Progress{Done: 0, Total: 2}, got.Progress)
		assert.Equal(t, e.Runner, got.Runner)
		stored, err := f.s.GetJob(f.ctx, j.ID)
		require.NoError(t, err)
		assert.Equal(t, e.ID, stored.RefID, "the job serves the experiment")

		_, err = f.s.GetExperiment(f.ctx, f.Workspace("other").ID, e.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ResultsWrittenOnce", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		e, _ := f.Experiment(v, 2)
		_, err := f.s.CreateResult(f.ctx, result(e, 0, true))
		requireCode(t, canvas.ECONFLICT, err) // queued, not running

		started, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, []experiment.Version{{VersionID: v.ID, Environment: "staging"}})
		require.NoError(t, err)
		assert.Equal(t, experiment.StatusRunning, started.Status)
		require.NotNil(t, started.StartedAt)
		again, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, []experiment.Version{{VersionID: uuid.NewString()}})
		require.NoError(t, err)
		assert.Equal(t, started.Versions, again.Versions, "a resumed start keeps the versions of the first")

		r := result(e, 0, true)
		written, err := f.s.CreateResult(f.ctx, r)
		require.NoError(t, err)
		assert.True(t, written)
		dup := result(e, 0, false)
		written, err = f.s.CreateResult(f.ctx, dup)
		require.NoError(t, err)
		assert.False(t, written, "a second result of the same case, version and repetition is not written")
		written, err = f.s.CreateResult(f.ctx, result(e, 1, false))
		require.NoError(t, err)
		assert.True(t, written)

		list, total, err := f.s.ListResults(f.ctx, experiment.ResultQuery{WorkspaceID: f.ws.ID, ExperimentID: e.ID})
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, 2, total)
		got := list[0]
		if got.TestCaseID != r.TestCaseID {
			got = list[1]
		}
		assert.Equal(t, r.Scores, got.Scores)
		assert.Equal(t, r.Cost, got.Cost)
		assert.Equal(t, r.Usage, got.Usage)
		assert.Equal(t, r.RunID, got.RunID)
		assert.Equal(t, "answer", *got.Output)
		assert.True(t, *got.Passed)

		slim, _, err := f.s.ListResults(f.ctx, experiment.ResultQuery{WorkspaceID: f.ws.ID, ExperimentID: e.ID,
			TestCaseID: r.TestCaseID, WithoutOutput: true})
		require.NoError(t, err)
		require.Len(t, slim, 1)
		assert.Nil(t, slim[0].Output)
		page, total, err := f.s.ListResults(f.ctx, experiment.ResultQuery{WorkspaceID: f.ws.ID, ExperimentID: e.ID,
			VersionIDs: []string{v.ID}, Limit: 1, Offset: 1})
		require.NoError(t, err)
		assert.Len(t, page, 1)
		assert.Equal(t, 2, total)

		got2, err := f.s.GetExperiment(f.ctx, f.ws.ID, e.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, got2.Progress.Done)
	})
	run(t, newStore, "FinishWithOutbox", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		e, _ := f.Experiment(v, 1)
		_, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, e.Versions)
		require.NoError(t, err)
		var seen *experiment.Experiment
		done, err := f.s.FinishExperiment(f.ctx, experiment.FinishParams{WorkspaceID: f.ws.ID, ID: e.ID,
			Status: experiment.StatusCompleted}, func(x *experiment.Experiment) (*queue.Job, error) {
			seen = x
			return &queue.Job{WorkspaceID: f.ws.ID, Kind: "webhook.canvas_event", RefID: x.ID}, nil
		})
		require.NoError(t, err)
		assert.Equal(t, experiment.StatusCompleted, done.Status)
		require.NotNil(t, done.CompletedAt)
		require.NotNil(t, seen)
		assert.Equal(t, experiment.StatusCompleted, seen.Status)
		jobs := f.Claim("w", 10, 0, "webhook.canvas_event")
		require.Len(t, jobs, 1, "the outbox job commits with the end")

		_, err = f.s.FinishExperiment(f.ctx, experiment.FinishParams{WorkspaceID: f.ws.ID, ID: e.ID,
			Status: experiment.StatusFailed, Error: &experiment.Error{Code: canvas.EINTERNAL, Message: "x"}}, nil)
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.CancelExperiment(f.ctx, f.ws.ID, e.ID, nil)
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, nil)
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "CancelStopsWrites", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		e, j := f.Experiment(v, 2)
		_, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, e.Versions)
		require.NoError(t, err)
		_, err = f.s.CreateResult(f.ctx, result(e, 0, true))
		require.NoError(t, err)
		got, err := f.s.CancelExperiment(f.ctx, f.ws.ID, e.ID, nil)
		require.NoError(t, err)
		assert.Equal(t, experiment.StatusCancelled, got.Status)
		assert.Equal(t, 1, got.Progress.Done, "the results written stay")
		assert.Equal(t, queue.StatusCancelled, f.GetJob(j.ID).Status)
		_, err = f.s.CreateResult(f.ctx, result(e, 1, true))
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "Annotate", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		e, _ := f.Experiment(v, 1)
		_, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, e.Versions)
		require.NoError(t, err)
		r := result(e, 0, false)
		_, err = f.s.CreateResult(f.ctx, r)
		require.NoError(t, err)
		got, err := f.s.AnnotateResult(f.ctx, experiment.AnnotateParams{WorkspaceID: f.ws.ID, ExperimentID: e.ID,
			ResultID: r.ID, Annotation: experiment.Annotation{Passed: true, Score: ptr(0.9), Comment: "fine", By: "bob"}})
		require.NoError(t, err)
		assert.True(t, *got.Passed, "the annotation decides the verdict")
		assert.False(t, *got.Verdict, "the evaluators' verdict is kept")
		assert.Equal(t, "bob", got.Annotation.By)
		assert.False(t, got.Annotation.UpdatedAt.IsZero())

		_, err = f.s.AnnotateResult(f.ctx, experiment.AnnotateParams{WorkspaceID: f.ws.ID, ExperimentID: uuid.NewString(),
			ResultID: r.ID, Annotation: experiment.Annotation{Passed: true}})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ListNewestFirst", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v := f.Version(c, "hello")
		first, _ := f.Experiment(v, 1)
		second, _ := f.Experiment(v, 1)
		f.Experiment(f.Version(f.Canvas("d", nil, "alice"), "x"), 1)
		list, total, err := f.s.ListExperiments(f.ctx, experiment.ListQuery{WorkspaceID: f.ws.ID, PromptID: c.ID, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 2, total)
		require.Len(t, list, 2)
		ids := []string{list[0].ID, list[1].ID}
		assert.ElementsMatch(t, []string{first.ID, second.ID}, ids)
		assert.False(t, list[0].CreatedAt.Before(list[1].CreatedAt), "newest first")
	})
	run(t, newStore, "SavedEvaluators", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		e := &experiment.SavedEvaluator{WorkspaceID: f.ws.ID, PromptID: c.ID, CreatedBy: "alice",
			Evaluator: experiment.Evaluator{Name: "tone", Type: experiment.TypeJudge, Rubric: "polite", Model: "gpt-4o",
				PassThreshold: ptr(0.7)}}
		require.NoError(t, f.s.CreateEvaluator(f.ctx, e))
		got, err := f.s.GetEvaluator(f.ctx, f.ws.ID, e.ID)
		require.NoError(t, err)
		assert.Equal(t, e.Evaluator, got.Evaluator)
		assert.Equal(t, c.ID, got.PromptID)

		dup := &experiment.SavedEvaluator{WorkspaceID: f.ws.ID, PromptID: c.ID, CreatedBy: "alice",
			Evaluator: experiment.Evaluator{Name: "tone", Type: "exact"}}
		requireCode(t, canvas.ECONFLICT, f.s.CreateEvaluator(f.ctx, dup))
		other := &experiment.SavedEvaluator{WorkspaceID: f.ws.ID, PromptID: c.ID, CreatedBy: "alice",
			Evaluator: experiment.Evaluator{Name: "exactly", Type: "exact"}}
		require.NoError(t, f.s.CreateEvaluator(f.ctx, other))
		list, total, err := f.s.ListEvaluators(f.ctx, f.ws.ID, experiment.EvaluatorQuery{PromptID: c.ID, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 2, total)
		require.Len(t, list, 2)
		assert.Equal(t, "exactly", list[0].Name, "by name")

		_, err = f.s.GetEvaluator(f.ctx, f.Workspace("other").ID, e.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "EvaluatorSecretsReseal", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		sealed := func(key string) *experiment.SealedSecret {
			return &experiment.SealedSecret{Ciphertext: []byte("ciphertext-" + key), Nonce: []byte("nonce-" + key), KeyID: key}
		}
		hook := func(name string, secret string, s *experiment.SealedSecret) experiment.Evaluator {
			return experiment.Evaluator{Name: name, Type: experiment.TypeWebhook, URL: "https://example.com/" + name,
				Secret: secret, Sealed: s}
		}
		saved := map[string]*experiment.SavedEvaluator{}
		for name, ev := range map[string]experiment.Evaluator{
			"rule": {Name: "rule", Type: "exact"}, "clear": hook("clear", "whsec_Y2xlYXI=", nil),
			"old": hook("old", "", sealed("k1")), "current": hook("current", "", sealed("k2")),
		} {
			saved[name] = &experiment.SavedEvaluator{WorkspaceID: f.ws.ID, PromptID: c.ID, CreatedBy: "alice", Evaluator: ev}
			require.NoError(t, f.s.CreateEvaluator(f.ctx, saved[name]))
		}
		names := func(list []*experiment.SavedEvaluator) []string {
			var out []string
			for _, e := range list {
				out = append(out, e.Name)
			}
			return out
		}
		todo, err := f.s.SealedEvaluators(f.ctx, "k2", "", 10)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"clear", "old"}, names(todo), "in clear or under another key")
		first, err := f.s.SealedEvaluators(f.ctx, "k2", "", 1)
		require.NoError(t, err)
		require.Len(t, first, 1)
		rest, err := f.s.SealedEvaluators(f.ctx, "k2", first[0].ID, 10)
		require.NoError(t, err)
		assert.Equal(t, names(todo)[1:], names(rest), "by id, after afterID")

		old := saved["old"]
		old.Sealed = sealed("k2")
		ok, err := f.s.ResealEvaluator(f.ctx, old, "k1")
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = f.s.ResealEvaluator(f.ctx, old, "k1")
		require.NoError(t, err)
		assert.False(t, ok, "resealed meanwhile")
		got, err := f.s.GetEvaluator(f.ctx, f.ws.ID, old.ID)
		require.NoError(t, err)
		assert.Equal(t, sealed("k2"), got.Sealed)
		clearOne := saved["clear"]
		clearOne.Secret, clearOne.Sealed = "", sealed("k2")
		ok, err = f.s.ResealEvaluator(f.ctx, clearOne, "")
		require.NoError(t, err)
		assert.True(t, ok)
		todo, err = f.s.SealedEvaluators(f.ctx, "k2", "", 10)
		require.NoError(t, err)
		assert.Empty(t, todo)

		v := f.Version(c, "v1")
		rules, _ := f.Experiment(v, 1)
		rules.Request.Evaluators = []experiment.Evaluator{hook("a", "", sealed("k2"))}
		ok, err = f.s.ResealExperiment(f.ctx, rules, "")
		require.NoError(t, err)
		assert.False(t, ok, "an experiment without secrets is not one to reseal")
		current := &experiment.Experiment{WorkspaceID: f.ws.ID, PromptID: c.ID, TestCaseIDs: []string{uuid.NewString()},
			Request: experiment.Request{PromptID: c.ID, VersionIDs: []string{v.ID}, Repetitions: 1,
				Evaluators: []experiment.Evaluator{hook("a", "", sealed("k2"))}},
			Progress: experiment.Progress{Total: 1}, CreatedBy: "alice"}
		require.NoError(t, f.s.CreateExperiment(f.ctx, current, &queue.Job{WorkspaceID: f.ws.ID, Kind: experiment.JobKindRun}))
		both := &experiment.Experiment{WorkspaceID: f.ws.ID, PromptID: c.ID, TestCaseIDs: []string{uuid.NewString()},
			Request: experiment.Request{PromptID: c.ID, VersionIDs: []string{v.ID}, Repetitions: 1,
				Evaluators: []experiment.Evaluator{hook("a", "", sealed("k1")), hook("b", "", sealed("k2"))}},
			Progress: experiment.Progress{Total: 1}, CreatedBy: "alice"}
		require.NoError(t, f.s.CreateExperiment(f.ctx, both, &queue.Job{WorkspaceID: f.ws.ID, Kind: experiment.JobKindRun}))
		list, err := f.s.SealedExperiments(f.ctx, "k2", "", 10)
		require.NoError(t, err)
		require.Len(t, list, 1, "the experiment whose secrets are under two keys")
		assert.Equal(t, both.ID, list[0].ID)
		assert.Equal(t, both.Request.Evaluators, list[0].Request.Evaluators)

		both.Request.Evaluators[0].Sealed = sealed("k2")
		ok, err = f.s.ResealExperiment(f.ctx, both, "")
		require.NoError(t, err)
		assert.True(t, ok)
		gotExp, err := f.s.GetExperiment(f.ctx, f.ws.ID, both.ID)
		require.NoError(t, err)
		assert.Equal(t, sealed("k2"), gotExp.Request.Evaluators[0].Sealed)
		list, err = f.s.SealedExperiments(f.ctx, "k2", "", 10)
		require.NoError(t, err)
		assert.Empty(t, list)
		list, err = f.s.SealedExperiments(f.ctx, "k3", "", 10)
		require.NoError(t, err)
		assert.Len(t, list, 2, "every experiment with secrets, when the key changes again")
	})
}
