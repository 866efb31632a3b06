package completion

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Options wire a Service. Store, Canvases, Environments and Providers are
// required.
type Options struct {
	// Store records runs and their jobs.
	Store Store
	// Canvases reads canvases and versions.
	Canvases canvas.Store
	// Environments resolves environment names and the promoted version.
	Environments *env.Service
	// Models makes the model calls: providers, file resolution and
	// structured output checks, shared with the llm steps of workflows.
	Models *model.Caller
	// Notify, when set, is called after a job is enqueued, to wake the
	// queue worker so that the work starts at once.
	Notify func()
	// Notifier resolves application_id targets and notifies the
	// application's subscription when such a run finishes; nil makes every
	// application NOT_FOUND.
	Notifier *webhook.Notifier
	// Workflows runs the workflow versions a completion targets; nil makes
	// such a completion VALIDATION.
	Workflows *workflow.Service
	// Now is the clock; nil means time.Now.
	Now canvas.Clock
	// NewID returns run ids; nil means version 7 UUIDs, which sort by
	// creation time, so that a run record's id lands at the end of the
	// store's id index instead of on a random page of it.
	NewID func() string
}

// Service runs canvases and tasks: it resolves the target version, renders
// it, calls the model (sync, streamed or through the durable queue) and
// records every run. Every method reads the Principal from its context:
// editors run, viewers read runs.
type Service struct {
	store     Store
	canvases  canvas.Store
	envs      *env.Service
	models    *model.Caller
	notify    func()
	notifier  *webhook.Notifier
	workflows *workflow.Service
	now       func() time.Time
	newID     func() string
}

// newRunID returns a version 7 UUID: 48 bits of milliseconds, then random
// bits.
func newRunID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	s := &Service{store: opts.Store, canvases: opts.Canvases, envs: opts.Environments,
		models: opts.Models, notify: opts.Notify, notifier: opts.Notifier, workflows: opts.Workflows, now: opts.Now,
		newID: opts.NewID}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = newRunID
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	return s
}

// Settings override a version's model configuration for one run; nil
// fields keep the configuration's values.
type Settings struct {
	Model            *string                  `json:"model"`
	Temperature      *float64                 `json:"temperature"`
	MaxTokens        *int                     `json:"maxTokens"`
	TopP             *float64                 `json:"topP"`
	StructuredOutput *canvas.StructuredOutput `json:"structuredOutput"`
	// CredentialID runs on that credential of the workspace (see
	// model.Caller.Target).
	CredentialID *string `json:"credentialId"`
}

// RunParams describe one completion of a canvas.
type RunParams struct {
	// CanvasID is the canvas to run; required.
	CanvasID string
	// EnvironmentName runs the version published to that environment; it
	// cannot be combined with VersionID or ApplicationID.
	EnvironmentName string
	// AssignmentKey picks the version of a split publication that serves
	// the run (env.Assign): the same key gets the same version while the
	// publication is active; without one each run draws. It applies when
	// an environment serves the run (EnvironmentName, an application's
	// environment, or production's promoted version).
	AssignmentKey string
	// VersionID runs that version, which must belong to CanvasID.
	VersionID string
	// ApplicationID runs in an application's context.
	ApplicationID string
	// Variables are the values of the version's {{variable}} placeholders.
	Variables map[string]any
	// Messages are appended to the version's messages as user messages.
	Messages []string
	// Conversation is appended after Messages with its own roles, tool
	// calls and tool results, unrendered: the messages of a test case, or
	// of a completion request whose messages have roles (all of them then
	// come here, in order, so that none moves ahead of another).
	Conversation []model.Message
	// Settings override the version's configuration.
	Settings *Settings
	// Stream, when set, receives the output chunk by chunk. Started, when
	// set, is called once the run is resolved and before the model is
	// called, with the run's id and creation time; no chunk comes before.
	Stream  func(model.Chunk) error
	Started func(r *Run)
	// Async (or a WebhookURL) accepts the run and executes it in the
	// background: Run returns the queued run at once.
	Async      bool
	WebhookURL string
	// ForwardHeaders are sent with the webhook notification.
	ForwardHeaders []webhook.Header
	// WorkflowEnvironment is the environment recorded on the run of a
	// workflow version: "api" when empty, "test-case" for test cases.
	WorkflowEnvironment string
	// Live marks a run of the API surface (POST /v2/chat/completions,
	// directly or through an application), which the canvas's
	// inferencesPercentage samples into the review queue (see Sample).
	// The server's completion route sets it unless the request is marked
	// a preview (the console's playground); test cases, generations,
	// experiments and every embedder's call leave it false. A workflow
	// version's run is a workflow run, which is not sampled.
	Live bool
	// Includes pins the includes of the version's messages: a reference
	// recorded here resolves to the version recorded for it, not to what
	// its environment serves now (a test-case generation runs what was
	// resolved when it was asked for).
	Includes []canvas.Include
}

// TaskParams describe a one-off prompt run, always asynchronous.
type TaskParams struct {
	// Prompt is the user message; required. Its {{variable}} placeholders
	// are filled from Variables.
	Prompt    string
	Variables map[string]any
	// Model defaults to EchoModel.
	Model          string
	WebhookURL     string
	ForwardHeaders []webhook.Header
}

// GetRun returns a completion run of the principal's workspace, with its
// feedback. It requires the viewer role and access to the run's canvas; a
// task is NOT_FOUND here.
// The completion of a workflow version is found by its execution id, as
// the completion run that stands for its workflow run (KindWorkflow).
func (s *Service) GetRun(ctx context.Context, id string) (*Run, error) {
	r, err := s.get(ctx, id, KindCompletion)
	if err != nil || r.Kind != KindCompletion {
		return r, err
	}
	if r.Feedback, err = s.store.GetFeedback(ctx, r.WorkspaceID, r.ID); err != nil {
		return nil, err
	}
	return r, nil
}

// GetTask returns a task run of the principal's workspace. It requires the
// viewer role; a completion run is NOT_FOUND here. A task belongs to no
// canvas, so a project-restricted principal reads only the tasks it
// created (FORBIDDEN otherwise).
func (s *Service) GetTask(ctx context.Context, id string) (*Run, error) {
	return s.get(ctx, id, KindTask)
}

func (s *Service) get(ctx context.Context, id, kind string) (*Run, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(id) != nil {
		return nil, canvas.NotFound(kind)
	}
	r, err := s.store.GetRun(ctx, p.WorkspaceID, id)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND && kind == KindCompletion && s.workflows != nil {
		// A workflow version's completion is recorded as its workflow run.
		res, werr := s.workflows.WorkflowRun(ctx, id)
		if werr != nil {
			return nil, werr
		}
		return workflowRun(p.WorkspaceID, res), nil
	}
	if err != nil {
		return nil, err
	}
	if r.Kind != kind {
		return nil, canvas.NotFound(kind)
	}
	if r.CanvasID != "" {
		if _, err := s.canvas(ctx, p, r.CanvasID); err != nil {
			return nil, err
		}
	} else if err := canvas.ReachableResource(ctx, s.canvases, p, "", r.CreatedBy); err != nil {
		// A task belongs to no canvas: a project-restricted principal
		// reads only the tasks it created.
		return nil, err
	}
	return r, nil
}

// canvas returns a live canvas the principal may reach.
func (s *Service) canvas(ctx context.Context, p *canvas.Principal, id string) (*canvas.Canvas, error) {
	return canvas.ReachableCanvas(ctx, s.canvases, p, id)
}
