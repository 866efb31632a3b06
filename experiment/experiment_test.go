package experiment_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/testcase"
)

func testCaseParams(promptID, q, suffix string, expected *string) testcase.CreateParams {
	return testcase.CreateParams{PromptID: promptID, Title: q,
		Variables: map[string]any{"q": q, "suffix": suffix}, ExpectedOutput: expected,
		Answers: map[string]testcase.AnswerSet{"default": {Good: []json.RawMessage{json.RawMessage(`"` + q + `"`)},
			Bad: []json.RawMessage{json.RawMessage(`"no idea"`)}}}}
}

// judgeCredential stores an OpenAI-compatible credential served by j.
func (w *world) judgeCredential(t *testing.T, j *judge) *credential.Credential {
	t.Helper()
	p := *canvas.PrincipalFrom(w.ctx)
	p.Role = canvas.RoleAdmin
	key := "sk-judge"
	cred, err := w.e.Credentials.CreateCredential(canvas.NewContext(w.ctx, &p), credential.CreateParams{Name: "judge",
		Provider: canvas.ProviderOpenAICompatible, APIKey: &key, BaseURL: &j.url})
	require.NoError(t, err)
	return cred
}

// TestExperiment_TwoVersions runs the canvas's test cases on two versions
// with a rule, a judge on a fake vendor and a webhook evaluator, and checks
// the results, the totals and the compare.
func TestExperiment_TwoVersions(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, v2 := w.canvasOf(t)
	j, h := newJudge(t, 0.8), newHook(t, "a2")
	cred := w.judgeCredential(t, j)

	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID, v2.ID},
		Evaluators: []experiment.Evaluator{
			{Name: "exact", Type: testcase.EvaluatorExact},
			{Name: "tone", Type: experiment.TypeJudge, Rubric: "The answer is short.", Model: "judge-1",
				CredentialID: cred.ID, PassThreshold: ptr(0.5)},
			h.evaluator(),
		}})
	require.NoError(t, err)
	assert.Equal(t, experiment.StatusQueued, x.Status)
	assert.Equal(t, experiment.Progress{Total: 10}, x.Progress)
	assert.Empty(t, x.Request.Evaluators[2].Secret, "a secret is never shown")

	x = w.wait(t, x.ID)
	require.Equal(t, experiment.StatusCompleted, x.Status, "error: %+v", x.Error)
	assert.Equal(t, experiment.Progress{Done: 10, Total: 10}, x.Progress)
	require.NotNil(t, x.StartedAt)
	require.NotNil(t, x.CompletedAt)
	require.Len(t, x.Versions, 2)

	t1, t2 := x.Versions[0].Totals, x.Versions[1].Totals
	assert.Equal(t, v1.ID, x.Versions[0].VersionID)
	assert.Equal(t, []int{5, 4, 1, 0}, []int{t1.Cases, t1.Passed, t1.Failed, t1.Errored}, "v1 fails only a5")
	assert.Equal(t, []int{5, 3, 2, 0}, []int{t2.Cases, t2.Passed, t2.Failed, t2.Errored}, "v2 fails a3 and a4")
	assert.InDelta(t, 0.8, *t1.PassRate, 1e-9)
	assert.InDelta(t, 0.8, t1.Scores["exact"], 1e-9)
	assert.InDelta(t, 0.8, t1.Scores["tone"], 1e-9)
	assert.InDelta(t, 1, t1.Scores["team"], 1e-9, "the webhook's error on a2 is no score")
	assert.Positive(t, t1.Tokens)
	assert.LessOrEqual(t, t1.LatencyP50Ms, t1.LatencyP95Ms)

	results, total, err := w.e.Experiments.Results(w.ctx, experiment.ResultsQuery{ExperimentID: x.ID, VersionID: v2.ID, Limit: 100})
	require.NoError(t, err)
	assert.Equal(t, 5, total)
	byCase := map[string]*experiment.Result{}
	for _, r := range results {
		byCase[*r.Output] = r
		require.NotNil(t, r.RunID, "each result links its run")
		run, err := w.e.Completions.GetRun(w.ctx, *r.RunID)
		require.NoError(t, err)
		assert.Equal(t, v2.ID, run.VersionID)
		require.Len(t, r.Scores, 3)
		tone := r.Scores[1]
		require.NotNil(t, tone.Judge, "the judge's own call is recorded apart")
		assert.Equal(t, 49, tone.Judge.Usage.InputTokens+tone.Judge.Usage.OutputTokens)
		assert.Equal(t, "meets the rubric", tone.Reason)
	}
	a2 := byCase["a2"]
	require.NotNil(t, a2)
	require.NotNil(t, a2.Scores[2].Error, "the webhook failed on a2")
	assert.Nil(t, a2.Scores[2].Passed)
	assert.True(t, *a2.Passed, "an evaluator's error does not fail the case")
	a3 := byCase["a3!"]
	require.NotNil(t, a3)
	assert.False(t, *a3.Passed)
	assert.Equal(t, "checked a3!", a3.Scores[2].Reason)

	// The judge was asked through structured output, with the rubric and
	// the test case's example answers.
	asked := j.requests()
	require.Len(t, asked, 10)
	format, _ := asked[0]["response_format"].(map[string]any)
	assert.Equal(t, "json_schema", format["type"])
	raw, _ := json.Marshal(asked[0]["messages"])
	assert.Contains(t, string(raw), "The answer is short.")
	assert.Contains(t, string(raw), "An example of a bad answer:\\nno idea")
	ids, bad := h.received()
	assert.Zero(t, bad, "every webhook request is signed")
	assert.Len(t, ids, 10)

	cmp, err := w.e.Experiments.Compare(w.ctx, x.ID, v1.ID, v2.ID)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1, 2}, []int{cmp.Regressions, cmp.Improvements, cmp.Unchanged})
	require.Len(t, cmp.Cases, 5)
	changes := map[string]string{}
	for _, p := range cmp.Cases {
		changes[*p.Baseline.Output] = p.Change
	}
	assert.Equal(t, map[string]string{"a1": "unchanged", "a2": "unchanged", "a3": "regression", "a4": "regression",
		"a5": "improvement"}, changes)

	// A person's annotation decides the verdict and moves the totals.
	_, err = w.e.Experiments.Annotate(w.ctx, x.ID, a3.ID, experiment.AnnotationParams{Passed: ptr(true), Score: ptr(0.6),
		Comment: "close enough"})
	require.NoError(t, err)
	again, err := w.e.Experiments.Get(w.ctx, x.ID)
	require.NoError(t, err)
	assert.Equal(t, 4, again.Versions[1].Totals.Passed)
	assert.InDelta(t, 0.6, again.Versions[1].Totals.Scores[experiment.HumanEvaluator], 1e-9)
	cmp, err = w.e.Experiments.Compare(w.ctx, x.ID, v1.ID, v2.ID)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1, 3}, []int{cmp.Regressions, cmp.Improvements, cmp.Unchanged})
}

// TestExperiment_Environments resolves environments to the versions they
// publish when the experiment starts, repeats each case, and fails an
// experiment whose environment publishes nothing.
func TestExperiment_Environments(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, _ := w.canvasOf(t)
	_, _, err := w.e.Environments.Publish(w.ctx, envPublish(c.ID, v1.ID))
	require.NoError(t, err)
	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, Environments: []string{"production"},
		Repetitions: 2, Evaluators: []experiment.Evaluator{{Name: "similar", Type: testcase.EvaluatorSimilarity, Threshold: ptr(0.6)}}})
	require.NoError(t, err)
	x = w.wait(t, x.ID)
	require.Equal(t, experiment.StatusCompleted, x.Status)
	require.Len(t, x.Versions, 1)
	assert.Equal(t, experiment.Version{VersionID: v1.ID, Environment: "production", Totals: x.Versions[0].Totals}, x.Versions[0])
	assert.Equal(t, 10, x.Versions[0].Totals.Cases, "5 cases × 2 repetitions")
	assert.Equal(t, 10, x.Versions[0].Totals.Passed, "a5 is alike a5! (0.67)")
	cmp, err := w.e.Experiments.Compare(w.ctx, x.ID, "production", v1.ID)
	require.NoError(t, err)
	assert.Equal(t, 10, cmp.Unchanged)

	none, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, Environments: []string{"staging"},
		Evaluators: []experiment.Evaluator{{Name: "exact", Type: testcase.EvaluatorExact}}})
	require.NoError(t, err)
	none = w.wait(t, none.ID)
	assert.Equal(t, experiment.StatusFailed, none.Status)
	require.NotNil(t, none.Error)
	assert.Equal(t, canvas.ENOTFOUND, none.Error.Code)
}

// TestExperiment_Cancel cancels an experiment whose webhook evaluator
// holds its cases: it stops, and no result is written afterwards.
func TestExperiment_Cancel(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, v2 := w.canvasOf(t)
	h := newHook(t)
	h.open = 2
	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID, v2.ID},
		Evaluators: []experiment.Evaluator{h.evaluator()}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := w.e.Experiments.Get(w.ctx, x.ID)
		return err == nil && got.Progress.Done == 2
	}, 10*time.Second, 10*time.Millisecond)
	cancelled, err := w.e.Experiments.Cancel(w.ctx, x.ID)
	require.NoError(t, err)
	assert.Equal(t, experiment.StatusCancelled, cancelled.Status)
	close(h.gate)
	time.Sleep(200 * time.Millisecond)
	got, err := w.e.Experiments.Get(w.ctx, x.ID)
	require.NoError(t, err)
	assert.Equal(t, experiment.StatusCancelled, got.Status)
	assert.Equal(t, 2, got.Progress.Done, "nothing is written after the cancel")
	_, err = w.e.Experiments.Cancel(w.ctx, x.ID)
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
}

// TestExperiment_Resume stops the engine in the middle of an experiment
// and opens it again on the same data: the experiment completes, the
// results written before the stop are kept as they were, and no finished
// case runs again.
func TestExperiment_Resume(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, v2 := w.canvasOf(t)
	h := newHook(t)
	h.open = 4
	// The webhook holds the cases past the fourth for longer than the
	// engine's shutdown waits, so that they are in flight when it stops.
	hold := h.evaluator()
	hold.TimeoutMs = experiment.MaxWebhookTimeoutMs
	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID, v2.ID},
		Repetitions: 2, Evaluators: []experiment.Evaluator{hold}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := w.e.Experiments.Get(w.ctx, x.ID)
		return err == nil && got.Progress.Done == 4
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, w.e.Close(), "the engine stops with cases in flight")
	before, _ := h.received()

	w2 := openWorld(t, w.dir)
	w2.ctx = canvas.NewContext(context.Background(), canvas.PrincipalFrom(w.ctx))
	early, _, err := w2.e.Experiments.Results(w2.ctx, experiment.ResultsQuery{ExperimentID: x.ID, Limit: 100})
	require.NoError(t, err)
	require.Len(t, early, 4, "the results written before the stop are kept")
	close(h.gate)
	done := w2.wait(t, x.ID)
	require.Equal(t, experiment.StatusCompleted, done.Status)
	assert.Equal(t, experiment.Progress{Done: 20, Total: 20}, done.Progress)

	all, _, err := w2.e.Experiments.Results(w2.ctx, experiment.ResultsQuery{ExperimentID: x.ID, Limit: 100})
	require.NoError(t, err)
	require.Len(t, all, 20)
	kept := map[string]*experiment.Result{}
	for _, r := range all {
		kept[r.ID] = r
	}
	for _, r := range early {
		require.Contains(t, kept, r.ID)
		assert.Equal(t, r.RunID, kept[r.ID].RunID, "a finished case is not run again")
	}
	after, _ := h.received()
	assert.Len(t, after, 20, "every result was scored")
	repeated := 0
	for id, n := range after {
		if n > 1 {
			repeated++
			assert.Equal(t, 1, before[id], "only a case in flight at the stop is scored again")
		}
	}
	assert.LessOrEqual(t, repeated, 4, "at most the cases in flight ran again")
}
