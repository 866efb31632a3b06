package workflow

import (
	"context"
	"encoding/json"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// CompletionRequest is a completion of a workflow version: a completion
// whose target is a workflow version runs the workflow instead of calling
// a model.
type CompletionRequest struct {
	Version *canvas.Version
	// Environment is the surface that starts the run: EnvAPI for
	// completions (the default), EnvTestCase for test case generations.
	Environment string
	// Variables are the values of the input node's variables.
	Variables map[string]any
	// Wait returns once the run has ended or paused; otherwise
	// RunWorkflow returns once the run is accepted.
	Wait bool
	// Notifications of the run's end (and pauses).
	WebhookURL     string
	ForwardHeaders []webhook.Header
	ApplicationID  string
}

// CompletionResult is the state of a workflow run that RunWorkflow started.
type CompletionResult struct {
	// ExecutionID is the run's external execution id.
	ExecutionID string
	// Status is the workflow run's status.
	Status string
	// Output is the text of the run's output step once it completed: a
	// string output as it is, any other value as JSON.
	Output string
	// Error says why a run that ended otherwise than completed ended, as
	// the completion reports it.
	Error *canvas.Error
	// Usage sums the token usage of the run's model calls.
	Usage model.Usage
	// CanvasID and VersionID say what ran.
	CanvasID  string
	VersionID string
	CreatedAt time.Time
	// UpdatedAt is when the run last changed, CompletedAt when it ended.
	UpdatedAt   time.Time
	CompletedAt *time.Time
}

// RunWorkflow starts a run of a workflow version for a completion (or a
// test case generation, req.Environment test-case) with a new external
// execution id, under the principal of ctx, whose access to the version
// the caller has checked. With req.Wait it returns once the run has ended
// or paused; a run that ends otherwise than completed is returned with its
// error, and the error itself: a step's error as the step recorded it
// (PROVIDER_ERROR when a model failed), TIMEOUT past the deadline, CONFLICT
// when cancelled. Without Wait it returns the accepted run.
func (s *Service) RunWorkflow(ctx context.Context, req CompletionRequest) (*CompletionResult, error) {
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
func (s *Service) WorkflowRun(ctx context.Context, executionID string) (*CompletionResult, error) {
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
func result(run *Run) *CompletionResult {
	res := &CompletionResult{ExecutionID: run.PublicID(), Status: run.Status, CanvasID: run.CanvasID,
		VersionID: run.VersionID, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt, CompletedAt: run.CompletedAt}
	for _, st := range run.Steps {
		var meta struct {
			Usage model.Usage `json:"usage"`
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
		res.Error = runError(run)
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
