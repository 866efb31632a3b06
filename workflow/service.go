package workflow

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Options wire a Service. Store, Canvases and Actions are required.
type Options struct {
	Store Store
	// Canvases reads versions and checks access to their canvases.
	Canvases canvas.Store
	// Actions are the actions nodes may use: Builtins, plus the
	// embedder's.
	Actions *Registry
	// Notifier, when set, notifies applications' subscriptions of the
	// runs started with an application.
	Notifier *webhook.Notifier
	// Files, when set, names the vault files of a run's input (their
	// name and type) and refuses, when the run starts, an address of a
	// file the workspace does not hold.
	Files FileLookup
	// Notify, when set, is called after jobs are enqueued, to wake the
	// queue worker (queue.Worker.Notify).
	Notify func()
	// Cancel, when set, is called with a run's id once it has ended by
	// cancellation or timeout: the in-process fast path that stops a step
	// running in this process (queue.Worker.Cancel). Workers of other
	// processes stop at their next heartbeat.
	Cancel func(refID string) int
	// Concurrency bounds the steps of one run that execute at once; zero
	// means 8.
	Concurrency int
	// PollInterval is how often Wait reads a run that another process
	// executes; zero means 200ms. Runs executed in this process wake Wait
	// at once.
	PollInterval time.Duration
	Logger       *slog.Logger
	// Now is the clock; nil means time.Now. NewID returns ids; nil means
	// version 7 UUIDs.
	Now   canvas.Clock
	NewID func() string
}

// StartParams describe a run to start.
type StartParams struct {
	// VersionID is the workflow version to run; required.
	VersionID string `json:"versionId"`
	// Input holds the values of the variables the input node declares.
	Input map[string]any `json:"input"`
	// StartNodeID and EndNodeID run part of the graph: the nodes that are
	// both reachable from StartNodeID and lead to EndNodeID; every other
	// step is skipped.
	StartNodeID string `json:"startNodeId"`
	EndNodeID   string `json:"endNodeId"`
}

// ReviewParams answer a run waiting for review.
type ReviewParams struct {
	Approved bool   `json:"approved"`
	Comment  string `json:"comment"`
	// StepID names the review step when several wait; "" means the first
	// waiting one in topological order.
	StepID string `json:"stepId"`
}

// ResumeParams give input to a run that requires action.
type ResumeParams struct {
	Input json.RawMessage `json:"input"`
	// StepID names the action step when several wait; "" means the first
	// waiting one in topological order.
	StepID string `json:"stepId"`
}

// Service starts, reads, cancels and resumes workflow runs, and executes
// them as queue jobs (HandleJob, HandleDeadline). Every method reads the
// Principal from its context: viewers read runs; editors start, cancel,
// review and resume them. A run is reached through its canvas: a run of a
// canvas the principal cannot reach is NOT_FOUND or FORBIDDEN as the canvas
// is.
type Service struct {
	store    Store
	canvases canvas.Store
	actions  *Registry
	notifier *webhook.Notifier
	files    FileLookup
	notify   func()
	cancel   func(string) int
	conc     int
	poll     time.Duration
	logger   *slog.Logger
	now      func() time.Time
	newID    func() string
	// compiled caches compiled workflows by version id: a version's
	// specification never changes once saved.
	compiled sync.Map
	// waiters wakes Wait when a run of this process changes status.
	waiters hub
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	s := &Service{store: opts.Store, canvases: opts.Canvases, actions: opts.Actions, notifier: opts.Notifier,
		files: opts.Files, notify: opts.Notify, cancel: opts.Cancel, conc: opts.Concurrency, poll: opts.PollInterval,
		logger: opts.Logger, now: opts.Now, newID: opts.NewID}
	if s.notify == nil {
		s.notify = func() {}
	}
	if s.cancel == nil {
		s.cancel = func(string) int { return 0 }
	}
	if s.conc <= 0 {
		s.conc = 8
	}
	if s.poll <= 0 {
		s.poll = 200 * time.Millisecond
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		// Version 7: ids sort by creation time, so that a new run lands at
		// the end of the store's id index (as completion runs do).
		s.newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	return s
}

// Actions returns the registry the service compiles specifications with.
func (s *Service) Actions() *Registry { return s.actions }

// CompileSpec compiles a workflow specification with the service's actions
// and returns the graph to store with the version: the service is the
// canvas.WorkflowCompiler of canvas.Options.Workflows.
func (s *Service) CompileSpec(spec json.RawMessage) (json.RawMessage, error) {
	w, err := Compile(spec, s.actions)
	if err != nil {
		return nil, err
	}
	return json.Marshal(w.Graph)
}

// workflow returns the compiled workflow of a version.
func (s *Service) workflow(v *canvas.Version) (*Workflow, error) {
	if w, ok := s.compiled.Load(v.ID); ok {
		return w.(*Workflow), nil
	}
	if !v.IsWorkflow || len(v.WorkflowSpec) == 0 {
		return nil, canvas.Invalid("The version is not a workflow.",
			canvas.Detail{Path: "/json/versionId", Message: "is not a workflow version"})
	}
	w, err := Compile(v.WorkflowSpec, s.actions)
	if err != nil {
		return nil, err
	}
	s.compiled.Store(v.ID, w)
	return w, nil
}

// Start starts a preview run (environment craft-preview) of a workflow
// version: the run is recorded pending with its jobs and returned at once,
// without its graph. It requires the editor role. The version must be a
// live workflow version of a canvas the principal reaches (NOT_FOUND
// otherwise; VALIDATION when it is not a workflow); Input must give every
// required variable of the input node, with the declared types
// (VALIDATION naming each under /json/input); StartNodeID and EndNodeID
// must be nodes of the graph, EndNodeID reachable from StartNodeID.
func (s *Service) Start(ctx context.Context, params StartParams) (*View, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(params.VersionID) != nil {
		return nil, canvas.Invalid("Request failed validation.",
			canvas.Detail{Path: "/json/versionId", Message: "must be a UUID"})
	}
	v, err := s.canvases.GetVersion(ctx, p.WorkspaceID, params.VersionID)
	if err != nil {
		return nil, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, v.PromptID); err != nil {
		return nil, err
	}
	run, err := s.start(ctx, p, startRequest{version: v, environment: EnvCraftPreview, input: params.Input,
		inputPath: "/json/input", startNodeID: params.StartNodeID, endNodeID: params.EndNodeID})
	if err != nil {
		return nil, err
	}
	return s.view(run, nil), nil
}

// startRequest is a run to start, whatever surface starts it.
type startRequest struct {
	version     *canvas.Version
	environment string
	externalID  string
	input       map[string]any
	// inputPath is the JSON pointer of input in the request, for errors.
	inputPath              string
	startNodeID, endNodeID string
	webhookURL             string
	forwardHeaders         []webhook.Header
	applicationID          string
}

// start checks req and records the run, pending, with its steps, its job
// and its deadline job. The includes of the llm nodes it executes must
// resolve for p (VALIDATION naming each node's message and the chain).
func (s *Service) start(ctx context.Context, p *canvas.Principal, req startRequest) (*Run, error) {
	w, err := s.workflow(req.version)
	if err != nil {
		return nil, err
	}
	span, err := w.span(req.startNodeID, req.endNodeID)
	if err != nil {
		return nil, err
	}
	if err := w.checkIncludes(ctx, req.version.PromptID, span); err != nil {
		return nil, err
	}
	input, err := runInput(ctx, s.files, w, req.input, req.inputPath)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	run := &Run{ID: s.newID(), ExternalID: req.externalID, WorkspaceID: p.WorkspaceID,
		CanvasID: req.version.PromptID, VersionID: req.version.ID, Environment: req.environment,
		Status: StatusPending, Input: input, StartNodeID: req.startNodeID, EndNodeID: req.endNodeID,
		WebhookURL: req.webhookURL, ForwardHeaders: req.forwardHeaders, ApplicationID: req.applicationID,
		CreatedBy: p.Actor(), CreatedAt: now, UpdatedAt: now, Deadline: now.Add(w.Timeout)}
	run.Steps = make([]*Step, len(w.Nodes))
	for i, n := range w.Nodes {
		st := &Step{ID: n.ID, Name: n.Name, ActionID: n.ActionID, Status: StepPending, Seq: n.Seq}
		if span != nil && !span[n.ID] {
			st.Status = StepSkipped
		}
		run.Steps[i] = st
	}
	jobs := []*queue.Job{
		{WorkspaceID: p.WorkspaceID, Kind: JobKindRun, RefID: run.ID},
		{WorkspaceID: p.WorkspaceID, Kind: JobKindDeadline, RefID: run.ID, RunAt: run.Deadline},
	}
	if err := s.store.CreateWorkflowRun(ctx, run, jobs); err != nil {
		return nil, err
	}
	s.notify()
	return run, nil
}

// Get returns a run found by its id or its external execution id, with its
// graph: the version's graph, each node enriched with its step's status,
// output and error. It requires the viewer role.
func (s *Service) Get(ctx context.Context, id string) (*View, error) {
	run, err := s.reachable(ctx, canvas.RoleViewer, id)
	if err != nil {
		return nil, err
	}
	v, err := s.canvases.GetVersion(ctx, run.WorkspaceID, run.VersionID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return s.view(run, nil), nil // the version is gone: the run stands, without its graph
	} else if err != nil {
		return nil, err
	}
	w, err := s.workflow(v)
	if err != nil {
		return s.view(run, nil), nil
	}
	return s.view(run, w), nil
}

// reachable returns run id, by its id or its external id, after checking
// that the principal of ctx has role and reaches the run's canvas.
func (s *Service) reachable(ctx context.Context, role canvas.Role, id string) (*Run, error) {
	p, err := canvas.Authorize(ctx, role)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(id) != nil {
		return nil, canvas.NotFound("workflow run")
	}
	run, err := s.store.GetWorkflowRun(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, run.CanvasID); err != nil {
		return nil, err
	}
	return run, nil
}

// Cancel cancels a run that has not ended: its steps that have not ended
// are cancelled, its queued and running jobs are cancelled (a step running
// in this process stops at once, in another at its worker's next
// heartbeat), and no further step starts. It returns the run without its
// graph; CONFLICT when the run has ended. It requires the editor role.
func (s *Service) Cancel(ctx context.Context, id string) (*View, error) {
	run, err := s.reachable(ctx, canvas.RoleEditor, id)
	if err != nil {
		return nil, err
	}
	run, err = s.end(ctx, run, TriggerCancel, "", &Error{Code: canvas.ECANCELLED, Message: "The run was cancelled."})
	if err != nil {
		return nil, err
	}
	s.cancel(run.ID) // a step running in this process stops now
	return s.view(run, nil), nil
}

// Review answers the review step a run waits on (StepID, or the first
// waiting one): approval goes on through its approved port; rejection
// through its rejected port when that port leads somewhere, else the run
// fails. CONFLICT unless the run waits for review. It returns the run
// without its graph. It requires the editor role.
func (s *Service) Review(ctx context.Context, id string, params ReviewParams) (*View, error) {
	payload, err := json.Marshal(struct {
		Approved bool   `json:"approved"`
		Comment  string `json:"comment,omitempty"`
	}{params.Approved, params.Comment})
	if err != nil {
		return nil, err
	}
	return s.resume(ctx, id, TriggerReview, StepWaitingForReview, params.StepID, payload)
}

// Resume gives its input to the action step a run waits on (StepID, or the
// first waiting one), and the run goes on. CONFLICT unless the run requires
// action; VALIDATION, with the run still waiting, when the action refuses
// the input. It returns the run without its graph. It requires the editor
// role.
func (s *Service) Resume(ctx context.Context, id string, params ResumeParams) (*View, error) {
	input := params.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	payload, err := json.Marshal(struct {
		Input json.RawMessage `json:"input"`
	}{input})
	if err != nil {
		return nil, err
	}
	return s.resume(ctx, id, TriggerResume, StepRequiresAction, params.StepID, payload)
}
