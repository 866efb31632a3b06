package testcase

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// generationInput is the payload of a generation's job: the test case's
// inputs and grading as they were when the run was asked for, so that an
// edit made while the job waits does not change what runs, and the identity
// the run is recorded under.
type generationInput struct {
	UserID string `json:"userId,omitempty"`
	KeyID  string `json:"keyId,omitempty"`
	// Projects is the caller's project restriction (null for none), so
	// that the run resolves files as the caller may.
	Projects       []string       `json:"projects"`
	Variables      map[string]any `json:"variables,omitempty"`
	Messages       []Message      `json:"messages,omitempty"`
	Files          []File         `json:"files,omitempty"`
	ExpectedOutput *string        `json:"expectedOutput,omitempty"`
	Evaluator      *Evaluator     `json:"evaluator,omitempty"`
	// Includes are the includes of the version as resolved when the
	// generation was asked for.
	Includes []canvas.Include `json:"includes,omitempty"`
}

func newGenerationInput(p *canvas.Principal, tc *TestCase) generationInput {
	return generationInput{UserID: p.UserID, KeyID: p.KeyID, Projects: p.Projects, Variables: tc.Variables, Messages: tc.Messages,
		Files: tc.Files, ExpectedOutput: tc.ExpectedOutput, Evaluator: tc.Evaluator}
}

// variables returns the run's variable values (RunVariables).
func (in *generationInput) variables() map[string]any { return RunVariables(in.Variables, in.Files) }

// RunVariables returns the variable values a test case runs with: its
// variables, plus, for each variable that they leave without a value and
// that files name (File.VariableName), the files' addresses as a file
// value ({"file_url": vaultUrl, else url}; an array when several files
// name the variable), in Index order.
func RunVariables(variables map[string]any, files []File) map[string]any {
	if len(files) == 0 {
		return variables
	}
	out := make(map[string]any, len(variables)+len(files))
	for k, v := range variables {
		out[k] = v
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b File) int { return a.Index - b.Index })
	byVar := map[string][]any{}
	var order []string
	for _, f := range files {
		addr := f.VaultURL
		if addr == "" {
			addr = f.URL
		}
		if f.VariableName == "" || addr == "" || variables[f.VariableName] != nil {
			continue
		}
		if byVar[f.VariableName] == nil {
			order = append(order, f.VariableName)
		}
		byVar[f.VariableName] = append(byVar[f.VariableName], map[string]any{"file_url": addr})
	}
	for _, name := range order {
		if v := byVar[name]; len(v) == 1 {
			out[name] = v[0]
		} else {
			out[name] = v
		}
	}
	return out
}

// HandleJob executes the generation a testcase.generate job serves: it
// moves it to running, runs its version through the Runner with the test
// case's variables, files and messages (the messages after the version's
// own, with their roles), and records it completed (output, usage, latency
// and, when the test case is graded, passed) or failed (the error, and the
// usage and latency of a model call that failed). The run is executed
// under the identity that asked for it, with the editor role.
//
// It is idempotent: a generation that has already finished (or aborted) is
// left alone, and an outcome that arrives after an abort is dropped. A
// model failure or a request the version cannot run (a missing required
// variable, an unknown model) fails the generation at once; only a failure
// of the service itself is retried, until the job's last attempt. When the
// job's context ends (an abort, a lost lease, a shutdown) nothing is
// recorded and the error is returned for the worker to act on.
func (s *GenerationService) HandleJob(ctx context.Context, j *queue.Job) error {
	var in generationInput
	if err := json.Unmarshal(j.Payload, &in); err != nil {
		return queue.Permanent(err)
	}
	g, err := s.store.StartGeneration(ctx, j.WorkspaceID, j.RefID)
	switch canvas.ErrorCode(err) {
	case "":
	case canvas.ECONFLICT, canvas.ENOTFOUND:
		return nil
	default:
		return err
	}
	p := &canvas.Principal{WorkspaceID: j.WorkspaceID, UserID: in.UserID, KeyID: in.KeyID, Role: canvas.RoleEditor,
		Projects: in.Projects}
	conv := make([]model.Message, len(in.Messages))
	for i, m := range in.Messages {
		conv[i] = model.Message{Role: m.Role, Content: m.Content}
	}
	run, err := s.runner.Run(canvas.NewContext(ctx, p), completion.RunParams{
		CanvasID: g.PromptID, VersionID: g.PromptVersionID, Variables: in.variables(), Conversation: conv,
		WorkflowEnvironment: workflow.EnvTestCase, Includes: in.Includes,
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	last := j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts
	if err != nil && canvas.ErrorCode(err) == canvas.EINTERNAL && !last {
		return err
	}
	tc := &TestCase{ExpectedOutput: in.ExpectedOutput, Evaluator: in.Evaluator}
	finishGeneration(g, tc, run, err)
	// The job that reports the outcome (generation.completed to the
	// canvas' application subscriptions) commits with it.
	var outbox func(*Generation) (*queue.Job, error)
	wrote := false
	if s.finishedJob != nil {
		outbox = func(g *Generation) (*queue.Job, error) {
			j, err := s.finishedJob(g)
			wrote = j != nil
			return j, err
		}
	}
	err = s.store.FinishGeneration(ctx, g, outbox)
	switch {
	case err == nil:
		if wrote {
			s.notify()
		}
		return nil
	case canvas.ErrorCode(err) == canvas.ECONFLICT:
		return nil // aborted meanwhile: aborted stays
	}
	return err // a store failure to retry
}

// finishGeneration sets g's outcome from the run and its error: completed
// with the output, graded against tc, or failed with the error; usage,
// cost and latency whenever the model was called.
func finishGeneration(g *Generation, tc *TestCase, run *completion.Run, err error) {
	if run != nil {
		latency := run.LatencyMs
		g.Usage = &Usage{InputTokens: run.Usage.InputTokens, OutputTokens: run.Usage.OutputTokens}
		g.Cost = run.Cost
		g.LatencyMs = &latency
	}
	if err != nil || run == nil || run.Result == nil || len(run.Result.Choices) == 0 {
		g.Status = GenerationFailed
		if err == nil && run != nil && run.Paused() {
			g.Error = &GenerationError{Code: canvas.ECONFLICT, Message: "The workflow run " + run.ID +
				" paused (" + run.WorkflowStatus + "); a test case needs a run that ends without review or action."}
		} else if err == nil {
			g.Error = &GenerationError{Code: canvas.EPROVIDER, Message: "The model gave no answer."}
		} else {
			g.Error = &GenerationError{Code: canvas.ErrorCode(err), Message: canvas.ErrorMessage(err)}
		}
		return
	}
	out := run.Result.Choices[0].Message.Content.Text
	g.Status, g.Output, g.Passed = GenerationCompleted, &out, tc.Grade(out)
}
