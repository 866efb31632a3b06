package completion

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// KindWorkflow is the kind of the Run that Service.Run returns for a
// workflow version: the workflow run's public record is the workflow run
// itself (GET /workflow/runs/{id}), so no completion run is stored.
const KindWorkflow = "workflow"

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
	res, err := s.workflows.RunWorkflow(ctx, workflow.CompletionRequest{Version: ver, Environment: params.WorkflowEnvironment,
		Variables: params.Variables, Wait: !async, WebhookURL: params.WebhookURL,
		ForwardHeaders: params.ForwardHeaders, ApplicationID: params.ApplicationID})
	if err != nil && res == nil {
		return nil, err
	}
	run := workflowRun(ver.WorkspaceID, res)
	run.ApplicationID, run.WebhookURL, run.Async = params.ApplicationID, params.WebhookURL, async
	run.Stream = params.Stream != nil && !async
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
			if err := params.Stream(model.Chunk{Text: res.Output}); err != nil {
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
func workflowRun(workspaceID string, res *workflow.CompletionResult) *Run {
	run := &Run{ID: res.ExecutionID, WorkspaceID: workspaceID, Kind: KindWorkflow, CanvasID: res.CanvasID,
		VersionID: res.VersionID, WorkflowStatus: res.Status, Usage: res.Usage, CreatedAt: res.CreatedAt,
		UpdatedAt: res.UpdatedAt, CompletedAt: res.CompletedAt}
	if run.UpdatedAt.IsZero() {
		run.UpdatedAt = run.CreatedAt
	}
	switch res.Status {
	case workflow.StatusPending:
		run.Status = StatusQueued
	case workflow.StatusCompleted:
		run.Status = StatusCompleted
		run.Result = newResponse(run.ID, run.CreatedAt, res.VersionID, &model.Result{Text: res.Output, Usage: res.Usage,
			FinishReason: "stop"})
	default:
		run.Status = StatusRunning
		if res.Error != nil || res.CompletedAt != nil {
			run.Status = StatusFailed
			if res.Error != nil {
				run.Error = runError(res.Error)
			}
		}
	}
	return run
}

// Paused reports whether r stands for a workflow run that waits for a
// review or an action.
func (r *Run) Paused() bool {
	return r.Kind == KindWorkflow && workflow.Paused(r.WorkflowStatus)
}
