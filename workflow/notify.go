package workflow

import (
	"context"

	"github.com/promptcanvas/promptcanvas/webhook"
)

// notificationData is the data of a workflow run notification.
type notificationData struct {
	ID          string `json:"id"`
	CanvasID    string `json:"canvasId"`
	VersionID   string `json:"versionId"`
	Environment string `json:"environment"`
	Status      string `json:"status"`
	Output      *Step  `json:"output"`
	Error       *Error `json:"error"`
}

// notification returns the deliveries that tell run's webhook URL and its
// application's subscription that the run moved to status to
// (workflow_run.completed, workflow_run.paused, or workflow_run.failed for
// every other end), none when there is no one to tell. output names the
// output step of a completed run.
func (s *Service) notification(ctx context.Context, run *Run, to, output string, runErr *Error) ([]webhook.Outgoing, error) {
	target := webhook.Target{URL: run.WebhookURL, Headers: run.ForwardHeaders, ApplicationID: run.ApplicationID}
	if !s.notifier.Reaches(target) {
		return nil, nil
	}
	typ := webhook.EventWorkflowRunFailed
	switch {
	case to == StatusCompleted:
		typ = webhook.EventWorkflowRunCompleted
	case Paused(to):
		typ = webhook.EventWorkflowRunPaused
	}
	data := notificationData{ID: run.PublicID(), CanvasID: run.CanvasID, VersionID: run.VersionID,
		Environment: run.Environment, Status: to, Error: runErr}
	if st := run.Step(output); st != nil {
		data.Output = st
	}
	ev, err := webhook.NewEvent(typ, s.now(), data)
	if err != nil {
		return nil, err
	}
	target.DeliveryID = s.newID()
	return s.notifier.RunDeliveries(ctx, run.WorkspaceID, run.ID, target, ev)
}
