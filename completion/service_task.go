package completion

import (
	"context"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
)

// taskMaxAttempts bounds the executions of a task whose model back end keeps
// failing.
const taskMaxAttempts = 3

// RunTask accepts a one-off prompt run and returns it queued; the queue
// executes it on the same path as an asynchronous completion and notifies
// WebhookURL (events task.succeeded and task.failed). It requires the editor
// role. The prompt is one user message whose placeholders are filled from
// Variables (a placeholder without a value is left as written); an empty
// prompt, a WebhookURL that is not an absolute http(s) URL with a host,
// or a model no provider serves is VALIDATION.
func (s *Service) RunTask(ctx context.Context, params TaskParams) (*Run, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(params.Prompt) == "" {
		return nil, canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/json/prompt", Message: "is required"})
	}
	if err := checkWebhookURL(params.WebhookURL); err != nil {
		return nil, err
	}
	name := params.Model
	if name == "" {
		name = model.EchoModel
	}
	// A task has no canvas: it may use every credential of the workspace
	// that serves one of the caller's projects (all, for a key of every
	// project).
	t, err := s.models.Target(ctx, model.Scope{WorkspaceID: p.WorkspaceID, Projects: p.Projects},
		model.Want{Model: name, Path: "/json/model"})
	if err != nil {
		return nil, err
	}
	msgs, err := model.RenderMax([]canvas.Message{{Role: canvas.RoleUser, Content: params.Prompt}}, nil, params.Variables, s.models.MaxPromptBytes())
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	run := &Run{
		ID: s.newID(), WorkspaceID: p.WorkspaceID, Kind: KindTask, Model: name, Status: StatusQueued,
		Async: true, Request: model.Request{Messages: msgs, Model: t.Model, Provider: t.Provider, CredentialID: t.CredentialID}, WebhookURL: params.WebhookURL,
		ForwardHeaders: params.ForwardHeaders, CreatedBy: p.Actor(), CreatedAt: now, UpdatedAt: now,
	}
	job := &queue.Job{WorkspaceID: run.WorkspaceID, Kind: JobKindTask, RefID: run.ID, MaxAttempts: taskMaxAttempts}
	if err := s.store.CreateRun(ctx, CreateRunParams{Run: run, Job: job}); err != nil {
		return nil, err
	}
	s.notify()
	return run, nil
}
