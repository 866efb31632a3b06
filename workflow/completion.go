package workflow

import (
	"context"
	"encoding/json"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
)

// Compile-time check that Service runs the workflow versions of
// completions.
var _ completion.Workflows = (*Service)(nil)

// RunWorkflow starts a run of a workflow version for a completion (or a
// test case generation, req.Environment test-case) with a new external
// execution id, under the principal of ctx, whose access to the version
// the caller has checked. With req.Wait it returns once the run has ended
// or paused; a run that ends otherwise than completed is returned with its
// error, and the error itself: a step's error as the step recorded it
// (PROVIDER_ERROR when a model failed), TIMEOUT past the deadline, CONFLICT
// when cancelled. Without Wait it returns the accepted run.
func (s *Service) RunWorkflow(ctx context.Context, req completion.WorkflowRequest) (*completion.WorkflowResult, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	env := req.Environment
	if env == "" {
		env = EnvAPI
	}
	run, err := s.start(ctx, p, startRequest{version: req.Version, environment: env, externalID: s.newID(),
		input: req.Variables, inputPath: "/json/variables", webhookURL: req.WebhookURL,
		forwardHeaders: req.ForwardHeaders, applicationID: req.ApplicationID})
	if err != nil {
		return nil, err
	}
	if req.Wait {
		if run, err = s.wait(ctx, run.WorkspaceID, run.ID); err != nil {
			return nil, err
		}
	}
	res := result(run)
	if Terminal(run.Status) && run.Status != StatusCompleted {
		return res, runError(run)
	}
	return res, nil
}

// WorkflowRun returns the state of a run started through completions, found
// by its execution id: the run of a canvas the principal of ctx reaches
// with the viewer role. Any other id, a preview run's included, is
// NOT_FOUND.
func (s *Service) WorkflowRun(ctx context.Context, executionID string) (*completion.WorkflowResult, error) {
	run, err := s.reachable(ctx, canvas.RoleViewer, executionID)
	if err != nil {
		return nil, err
	}
	if run.ExternalID != executionID {
		return nil, canvas.NotFound("run")
	}
	return result(run), nil
}

// result is the state of run as completions report it: its status, output
// text once completed, error once ended otherwise, and the usage summed
// over its model calls.
func result(run *Run) *completion.WorkflowResult {
	res := &completion.WorkflowResult{ExecutionID: run.PublicID(), Status: run.Status, CanvasID: run.CanvasID,
		VersionID: run.VersionID, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt, CompletedAt: run.CompletedAt}
	for _, st := range run.Steps {
		var meta struct {
			Usage completion.Usage `json:"usage"`
		}
		if len(st.Metadata) > 0 && json.Unmarshal(st.Metadata, &meta) == nil {
			res.Usage.InputTokens += meta.Usage.InputTokens
			res.Usage.OutputTokens += meta.Usage.OutputTokens
		}
	}
	switch {
	case run.Status == StatusCompleted:
		if out := run.Step(run.OutputNodeID); out != nil {
			res.Output = outputText(out.Output)
		}
	case Terminal(run.Status):
		rerr := runError(run)
		res.Error = &completion.RunError{Code: rerr.Code, Message: rerr.Message}
	}
	return res
}

// runError is the error a completion answers for a run that ended
// otherwise than completed.
func runError(run *Run) *canvas.Error {
	msg := "The workflow run " + run.PublicID() + " ended " + run.Status
	if run.Error != nil {
		msg += ": " + run.Error.Message
	}
	switch run.Status {
	case StatusCancelled:
		return &canvas.Error{Code: canvas.ECONFLICT, Message: msg}
	case StatusTimeout:
		return &canvas.Error{Code: canvas.ETIMEOUT, Message: msg}
	}
	code := canvas.EPROVIDER
	if run.Error != nil && run.Error.Code != canvas.EINTERNAL {
		if _, known := knownCodes[run.Error.Code]; known {
			code = run.Error.Code
		}
	}
	return &canvas.Error{Code: code, Message: msg}
}

// knownCodes are the canvas error codes a failed run's error keeps as the
// completion's error; any other code (REJECTED, NO_OUTPUT, an embedder's)
// answers PROVIDER_ERROR, the run having failed where the model would.
var knownCodes = map[string]struct{}{
	canvas.EPROVIDER: {}, canvas.EINVALID: {}, canvas.ENOTFOUND: {}, canvas.EFORBIDDEN: {},
}

// outputText is the text of an output value: a string as it is, any other
// value as JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 {
		return ""
	}
	return string(raw)
}
