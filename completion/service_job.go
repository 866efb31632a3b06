package completion

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// JobKinds are the queue kinds HandleJob executes; a worker registers
// HandleJob for each of them.
func JobKinds() []string { return []string{JobKindCompletion, JobKindTask} }

// HandleJob executes the run a completion.run or task.run job serves. It is
// idempotent: a run that is already terminal is left alone (a job claimed
// again after a crash does not run or notify twice). A model failure that
// may pass (retryable) is returned for the queue to retry with backoff
// until the job's last attempt, which records the run failed; any other
// failure (an output that does not match the structured output schema, a
// vendor refusing the request or its key) fails the run at once. The final state and, when
// the run has a webhook URL, the deliveries of its notification are
// written in one transaction.
func (s *Service) HandleJob(ctx context.Context, j *queue.Job) error {
	run, err := s.store.StartRun(ctx, j.WorkspaceID, j.RefID)
	if canvas.ErrorCode(err) == canvas.ECONFLICT || canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil // already finished, or gone: nothing to do
	} else if err != nil {
		return err
	}
	start := time.Now()
	res, err := s.execute(ctx, run, nil)
	if err != nil && ctx.Err() != nil {
		return err // the worker stops or lost the lease: the job runs again
	}
	last := j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts
	if err != nil && retryable(err) && !last {
		return err
	}
	s.finish(run, res, err, time.Since(start))
	notify, nerr := s.notification(ctx, run, false)
	if nerr != nil {
		return queue.Permanent(nerr)
	}
	if err := s.store.FinishRun(ctx, FinishRunParams{Run: run, Notify: notify}); canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil
	} else if err != nil {
		return err
	}
	if len(notify) > 0 {
		s.notify()
	}
	return nil
}

// retryable reports whether running a failed run again may succeed: a
// PROVIDER_ERROR other than an output mismatch, unless the vendor answered
// a status that will not change (model.VendorError.Retryable).
func retryable(err error) bool {
	var oe *model.OutputError
	if errors.As(err, &oe) || canvas.ErrorCode(err) != canvas.EPROVIDER {
		return false
	}
	var ve *model.VendorError
	return !errors.As(err, &ve) || ve.Retryable()
}

// notification returns the deliveries of run's webhook notification, none
// when no one is told: one to its webhook URL and, for a completion with
// an application (whose subscription takes the event), one to the
// subscription.
// Its data is {id, canvasId, versionId, environmentName?, status, result?,
// error?}; tasks carry only id, status, result and error. withoutURL
// leaves the webhook URL out (a sync run has none to notify).
func (s *Service) notification(ctx context.Context, run *Run, withoutURL bool) ([]webhook.Outgoing, error) {
	to := webhook.Target{Headers: run.ForwardHeaders}
	if !withoutURL {
		to.URL = run.WebhookURL
	}
	if run.Kind == KindCompletion {
		to.ApplicationID = run.ApplicationID
	}
	if !s.notifier.Reaches(to) {
		return nil, nil
	}
	data, err := json.Marshal(notificationData{ID: run.ID, CanvasID: run.CanvasID, VersionID: run.VersionID,
		EnvironmentName: run.EnvironmentName, Status: run.Status, Result: run.Result, Error: run.Error})
	if err != nil {
		return nil, err
	}
	typ := webhook.EventCompletionSucceeded
	switch {
	case run.Kind == KindTask && run.Status == StatusCompleted:
		typ = webhook.EventTaskSucceeded
	case run.Kind == KindTask:
		typ = webhook.EventTaskFailed
	case run.Status != StatusCompleted:
		typ = webhook.EventCompletionFailed
	}
	ev := webhook.Event{Type: typ, Timestamp: s.now().UTC(), Data: data}
	to.DeliveryID = s.newID()
	return s.notifier.RunDeliveries(ctx, run.WorkspaceID, run.ID, to, ev)
}

// notificationData is the data of a completion or task notification.
type notificationData struct {
	ID              string    `json:"id"`
	CanvasID        string    `json:"canvasId,omitempty"`
	VersionID       string    `json:"versionId,omitempty"`
	EnvironmentName string    `json:"environmentName,omitempty"`
	Status          string    `json:"status"`
	Result          *Response `json:"result,omitempty"`
	Error           *RunError `json:"error,omitempty"`
}
