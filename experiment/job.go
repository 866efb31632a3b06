package experiment

import (
	"context"
	"errors"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// errNotRunning stops the case runs of an experiment that was cancelled
// meanwhile.
var errNotRunning = errors.New("experiment: not running")

// HandleJob runs the experiment a JobKindRun job serves. A queued
// experiment starts: its environments resolve to the versions they publish
// (an environment that publishes nothing fails the experiment) and it
// moves to running. Then every result not yet written is run, at most
// Options.Concurrency at once, each through the Runner as the principal
// that started the experiment and scored by every evaluator, and written
// once; when all are, the experiment is completed and its end reported
// (Options.EndedJob) in the same transaction.
//
// It resumes: a claim after a crash or a shutdown runs only the results
// that are not written, so none is lost or run twice once written. A
// failure of the service itself (a store error) is retried by the queue,
// and fails the experiment on the job's last attempt; a failed run or
// evaluator is a result's error, not the experiment's. When the job's
// context ends (a cancel, a lost lease, a shutdown) the runs in flight are
// dropped and the error returned for the worker to act on.
func (s *Service) HandleJob(ctx context.Context, j *queue.Job) error {
	e, err := s.store.GetExperiment(ctx, j.WorkspaceID, j.RefID)
	switch {
	case canvas.ErrorCode(err) == canvas.ENOTFOUND:
		return nil
	case err != nil:
		return err
	case e.Terminal():
		return nil
	}
	last := j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts
	pctx := canvas.NewContext(ctx, e.Runner.Principal(j.WorkspaceID))
	c, err := canvas.ReachableCanvas(pctx, s.canvases, canvas.PrincipalFrom(pctx), e.PromptID)
	if err == nil && e.Status == StatusQueued {
		var versions []Version
		if versions, err = s.resolveVersions(pctx, e); err == nil {
			e, err = s.store.StartExperiment(ctx, j.WorkspaceID, e.ID, versions)
			if canvas.ErrorCode(err) == canvas.ECONFLICT {
				return nil // cancelled meanwhile
			}
		}
	}
	if err == nil {
		err = s.openExperiment(e)
	}
	if err == nil {
		err = s.runAll(pctx, c, e)
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, errNotRunning):
		return nil
	case err == nil:
		return s.end(ctx, e, StatusCompleted, nil)
	case canvas.ErrorCode(err) == canvas.EINTERNAL && !last:
		return err
	}
	return s.end(ctx, e, StatusFailed, errorOf(err))
}

// resolveVersions returns the versions e runs: those it names, or those
// its environments publish now.
func (s *Service) resolveVersions(ctx context.Context, e *Experiment) ([]Version, error) {
	if len(e.Request.Environments) == 0 {
		return e.Versions, nil
	}
	out := make([]Version, len(e.Request.Environments))
	for i, name := range e.Request.Environments {
		v, err := s.envs.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: e.PromptID, EnvName: name})
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return nil, canvas.Errorf(canvas.ENOTFOUND, "The environment %q publishes no version of the canvas.", name)
		} else if err != nil {
			return nil, err
		}
		out[i] = Version{VersionID: v.ID, Environment: name}
	}
	return out, nil
}

// end moves e to status with its error and reports it, with the totals of
// its results; an experiment cancelled meanwhile stays cancelled.
func (s *Service) end(ctx context.Context, e *Experiment, status string, why *Error) error {
	results, _, err := s.store.ListResults(ctx, ResultQuery{WorkspaceID: e.WorkspaceID, ExperimentID: e.ID, WithoutOutput: true})
	if err != nil {
		return err
	}
	versions := totalsOf(e.Versions, results)
	wrote := false
	outbox := s.outbox(&wrote)
	if outbox != nil {
		inner := outbox
		outbox = func(w *Experiment) (*queue.Job, error) {
			cp := *w
			cp.Versions = versions
			return inner(&cp)
		}
	}
	_, err = s.store.FinishExperiment(ctx, FinishParams{WorkspaceID: e.WorkspaceID, ID: e.ID, Status: status, Error: why}, outbox)
	if canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil
	} else if err != nil {
		return err
	}
	if wrote {
		s.notify()
	}
	return nil
}

// runAll runs and writes every result of e that is not written yet.
func (s *Service) runAll(ctx context.Context, c *canvas.Canvas, e *Experiment) error {
	list, err := s.testCases.ListTestCases(ctx, testcase.Filter{WorkspaceID: e.WorkspaceID, IDs: e.TestCaseIDs})
	if err != nil {
		return err
	}
	cases := make(map[string]*testcase.TestCase, len(list))
	for _, tc := range list {
		cases[tc.ID] = tc
	}
	written, _, err := s.store.ListResults(ctx, ResultQuery{WorkspaceID: e.WorkspaceID, ExperimentID: e.ID, WithoutOutput: true})
	if err != nil {
		return err
	}
	done := make(map[key]bool, len(written))
	for _, r := range written {
		done[r.key()] = true
	}
	var todo []key
	for _, id := range e.TestCaseIDs {
		for _, v := range e.Versions {
			for rep := 1; rep <= max(e.Request.Repetitions, 1); rep++ {
				if k := (key{id, v.VersionID, rep}); !done[k] {
					todo = append(todo, k)
				}
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	work := make(chan key)
	var wg sync.WaitGroup
	for range min(s.concurrency, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if err := s.runOne(ctx, c, e, cases[k.testCaseID], k); err != nil {
					stop(err)
				}
			}
		}()
	}
	for _, k := range todo {
		select {
		case work <- k:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

// runOne runs test case tc (nil when it was deleted since the experiment
// started) on a version, scores the output, and writes the result. It
// writes nothing when ctx ends; a failure of the service itself is
// returned.
func (s *Service) runOne(ctx context.Context, c *canvas.Canvas, e *Experiment, tc *testcase.TestCase, k key) error {
	r := &Result{WorkspaceID: e.WorkspaceID, ExperimentID: e.ID, TestCaseID: k.testCaseID, VersionID: k.versionID,
		Repetition: k.repetition, Scores: []Score{}}
	if tc == nil {
		r.Error = &Error{Code: canvas.ENOTFOUND, Message: "The test case was deleted after the experiment started."}
	} else {
		conv := make([]model.Message, len(tc.Messages))
		for i, m := range tc.Messages {
			conv[i] = model.Message{Role: m.Role, Content: m.Content}
		}
		run, err := s.runner.Run(ctx, completion.RunParams{CanvasID: e.PromptID, VersionID: k.versionID,
			Variables: testcase.RunVariables(tc.Variables, tc.Files), Conversation: conv,
			WorkflowEnvironment: workflow.EnvTestCase})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && canvas.ErrorCode(err) == canvas.EINTERNAL {
			return err
		}
		if run != nil {
			id := run.ID
			r.RunID, r.LatencyMs, r.Usage, r.Cost = &id, run.LatencyMs, run.Usage, run.Cost
		}
		output, why := outputOf(run, err)
		if why != nil {
			r.Error = why
		} else {
			r.Output = &output
			r.Scores = s.score(ctx, c, e, tc, r, output)
			if ctx.Err() != nil {
				return nil
			}
			r.Verdict = verdictOf(r.Scores)
		}
	}
	r.settle()
	_, err := s.store.CreateResult(ctx, r)
	switch {
	case ctx.Err() != nil:
		return nil
	case canvas.ErrorCode(err) == canvas.ECONFLICT:
		return errNotRunning
	}
	return err
}

// outputOf returns a run's answer, or the error that kept it from one.
func outputOf(run *completion.Run, err error) (string, *Error) {
	switch {
	case err != nil:
		return "", errorOf(err)
	case run == nil || run.Result == nil || len(run.Result.Choices) == 0:
		if run != nil && run.Paused() {
			return "", &Error{Code: canvas.ECONFLICT, Message: "The workflow run " + run.ID +
				" paused (" + run.WorkflowStatus + "); an experiment needs a run that ends without review or action."}
		}
		return "", &Error{Code: canvas.EPROVIDER, Message: "The model gave no answer."}
	}
	return run.Result.Choices[0].Message.Content.Text, nil
}

// score runs every evaluator of e on output, in order.
func (s *Service) score(ctx context.Context, c *canvas.Canvas, e *Experiment, tc *testcase.TestCase, r *Result, output string) []Score {
	scores := make([]Score, 0, len(e.Request.Evaluators))
	for i := range e.Request.Evaluators {
		ev := &e.Request.Evaluators[i]
		var sc Score
		switch ev.Type {
		case TypeJudge:
			sc = s.judge(ctx, c, ev, tc, output)
		case TypeWebhook:
			sc = s.hook(ctx, ev, tc, r, output)
		default:
			sc = ruleScore(ev, tc, output)
		}
		sc.Evaluator = ev.Name
		scores = append(scores, sc)
	}
	return scores
}

// ruleScore judges output with a rule evaluator of package testcase.
func ruleScore(ev *Evaluator, tc *testcase.TestCase, output string) Score {
	v, err := ev.rule().Judge(output, tc.ExpectedOutput)
	if err != nil {
		return Score{Error: &Error{Code: canvas.EINVALID, Message: err.Error()}}
	}
	return Score{Score: &v.Score, Passed: &v.Passed, Reason: v.Reason}
}

// verdictOf is whether every score with a verdict passed, nil when none
// has one.
func verdictOf(scores []Score) *bool {
	var verdict *bool
	for _, s := range scores {
		if s.Passed == nil {
			continue
		}
		ok := *s.Passed && (verdict == nil || *verdict)
		verdict = &ok
	}
	return verdict
}
