package main

import (
	"context"
	"log/slog"

	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// models calls the completion service for the llm steps of workflows. The
// workflow service is built before the completion service, which runs
// workflow versions through it; svc is set once both exist, before any
// request.
type models struct{ svc *completion.Service }

func (m *models) Call(ctx context.Context, workspaceID string, req completion.RunRequest) (*completion.Result, error) {
	return m.svc.Call(ctx, workspaceID, req)
}

// workflows builds the workflow service with the built-in actions and the
// file vault (which names the files of a run's input). Runs execute as
// queue jobs and wake the worker when enqueued, and a cancellation stops a
// step running in this process at once (Worker.Cancel).
func workflows(db store.Store, m *models, files *vault.Service, notifier *webhook.Notifier, worker func() *queue.Worker,
	logger *slog.Logger) *workflow.Service {
	return workflow.NewService(workflow.Options{Store: db, Canvases: db,
		Actions: workflow.Builtins(workflow.BuiltinOptions{Models: m}), Notifier: notifier, Files: files,
		Notify: func() { worker().Notify() }, Cancel: func(refID string) int { return worker().Cancel(refID) },
		Logger: logger})
}

// handleWorkflows registers the workflow service's job handlers on worker:
// runs in the model lane, deadlines in the maintenance lane, so that a
// deadline fires while runs hold every model slot.
func handleWorkflows(worker *queue.Worker, svc *workflow.Service) {
	worker.HandleIn(queue.LaneModel, workflow.JobKindRun, svc.HandleJob)
	worker.HandleIn(queue.LaneMaintenance, workflow.JobKindDeadline, svc.HandleDeadline)
}
