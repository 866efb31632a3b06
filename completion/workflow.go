package completion

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// KindWorkflow is the kind of the Run that Service.Run returns for a
// workflow version: the workflow run's public record is the workflow run
// itself (GET /workflow/runs/{id}), so no completion run is stored.
const KindWorkflow = "workflow"

// Workflows starts runs of workflow versions: a completion whose target is
// a workflow version runs the workflow instead of calling a model
// (workflow.Service implements it).
type Workflows interface {
	RunWorkflow(ctx context.Context, req WorkflowRequest) (*WorkflowResult, error)
	// WorkflowRun returns the state of a run that RunWorkflow started,
	// found by its execution id, for a viewer of its canvas (NOT_FOUND
	// for any other id).
	WorkflowRun(ctx context.Context, executionID string) (*WorkflowResult, error)
}

// WorkflowRequest is a completion of a workflow version.
type WorkflowRequest struct {
	Version *canvas.Version
	// Environment is the surface that starts the run: "api" for
	// completions, "test-case" for test case generations.
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

// WorkflowResult is the state of a workflow run that RunWorkflow started.
type WorkflowResult struct {
	// ExecutionID is the run's external execution id.
	ExecutionID string
	// Status is the workflow run's status.
	Status string
	// Output is the text of the run's output step once it completed: a
	// string output as it is, any other value as JSON.
	Output string
	// Error says why a run that ended otherwise than completed ended.
	Error *RunError
	// Usage sums the token usage of the run's model calls.
	Usage Usage
	// CanvasID and VersionID say what ran.
	CanvasID  string
	VersionID string
	CreatedAt time.Time
	// UpdatedAt is when the run last changed, CompletedAt when it ended.
	UpdatedAt   time.Time
	CompletedAt *time.Time
}

// runWorkflow runs a workflow version for Run: asynchronous requests (Async
// or a WebhookURL) return the accepted run at once; the others wait until
// the workflow run ends or pauses. A completed run answers its output text
// as the completion's one choice (streamed as one chunk, after Started);
// a paused run returns with WorkflowStatus set and nothing streamed. The
// request's messages and settings do not apply to a workflow: its llm
// nodes carry their own.
func (s *Service) runWorkflow(ctx context.Context, params RunParams, ver *canvas.Version) (*Run, error) {
	if s.workflows == nil {
		return nil, canvas.Invalid("This service does not run workflows.",
			canvas.Detail{Path: "/json/canvas_id", Message: "the version to run is a workflow"})
	}
	async := params.Async || params.WebhookURL != ""
	res, err := s.workflows.RunWorkflow(ctx, WorkflowRequest{Version: ver, Environment: params.WorkflowEnvironment,
		Variables: params.Variables, Wait: !async, WebhookURL: params.WebhookURL,
		ForwardHeaders: params.ForwardHeaders, ApplicationID: params.ApplicationID})
	if err != nil && res == nil {
		return nil, err
	}
	run := workflowRun(ver.WorkspaceID, res)
	run.ApplicationID, run.WebhookURL, run.Async = params.ApplicationID, params.WebhookURL, async
	if async {
		run.Status, run.Result, run.Error, run.CompletedAt = StatusQueued, nil, nil, nil
		return run, nil
	}
	if err != nil {
		return run, err
	}
	if run.Status == StatusCompleted {
		if params.Started != nil {
			params.Started(run)
		}
		if params.Stream != nil {
			if err := params.Stream(Chunk{Text: res.Output}); err != nil {
				return run, err
			}
		}
	}
	return run, nil
}

// workflowRun is the completion run that stands for a workflow run: queued
// while it is pending, running while it runs or is paused (WorkflowStatus
// says which), completed with its output text as the completion's one
// choice, failed otherwise.
func workflowRun(workspaceID string, res *WorkflowResult) *Run {
	run := &Run{ID: res.ExecutionID, WorkspaceID: workspaceID, Kind: KindWorkflow, CanvasID: res.CanvasID,
		VersionID: res.VersionID, WorkflowStatus: res.Status, Usage: res.Usage, CreatedAt: res.CreatedAt,
		UpdatedAt: res.UpdatedAt, CompletedAt: res.CompletedAt}
	if run.UpdatedAt.IsZero() {
		run.UpdatedAt = run.CreatedAt
	}
	switch res.Status {
	case workflowPending:
		run.Status = StatusQueued
	case workflowCompleted:
		run.Status = StatusCompleted
		run.Result = newResponse(run.ID, run.CreatedAt, res.VersionID, &Result{Text: res.Output, Usage: res.Usage,
			FinishReason: "stop"})
	default:
		run.Status = StatusRunning
		if res.Error != nil || res.CompletedAt != nil {
			run.Status, run.Error = StatusFailed, res.Error
		}
	}
	return run
}

// Statuses of workflow runs that a completion run tells apart.
const (
	workflowPending          = "pending"
	workflowCompleted        = "completed"
	workflowWaitingForReview = "waiting-for-review"
	workflowRequiresAction   = "requires-action"
)

// Paused reports whether r stands for a workflow run that waits for a
// review or an action.
func (r *Run) Paused() bool {
	return r.Kind == KindWorkflow && (r.WorkflowStatus == workflowWaitingForReview ||
		r.WorkflowStatus == workflowRequiresAction)
}
