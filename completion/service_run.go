package completion

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// completionMaxAttempts bounds the executions of an asynchronous run whose
// model back end keeps failing.
const completionMaxAttempts = 3

// Run executes a completion of a canvas. It requires the editor role and
// access to the canvas. A WebhookURL that is not an absolute http(s) URL
// with a host is VALIDATION before anything else is read.
//
// The target is resolved in this order: EnvironmentName (an invalid name is
// INVALID_ENVIRONMENT_NAME; combined with VersionID or ApplicationID it is
// VALIDATION; a missing environment or one with nothing published is
// NOT_FOUND), else VersionID (NOT_FOUND unless it is a live version of the
// canvas), else ApplicationID (the version its environment serves for its
// canvas: NOT_FOUND when the application is unknown or of another
// workspace, or nothing is published there; VALIDATION when it has no
// canvas or CanvasID names another one; an empty CanvasID takes the
// application's), else the promoted version (NOT_FOUND when there is none). The version is
// rendered with Variables (VALIDATION naming every problem), Settings
// override its configuration, and the model must be served by a provider
// (VALIDATION otherwise). An empty model means EchoModel.
//
// File variables are resolved in the principal's workspace (see
// FileResolver.Resolve): a vault address that does not resolve there is
// NOT_FOUND, a public file that cannot be used is VALIDATION naming the
// variable. Synchronous and streamed runs resolve them before the model is
// called, and fail without being recorded; asynchronous runs are checked
// when accepted (addresses and vault files, see FileResolver.Check) and
// store only the addresses, which the job resolves when it runs (a file
// deleted meanwhile fails the run with NOT_FOUND).
//
// Synchronous and streamed runs return the finished run, recorded; a model
// failure, or output that does not match the structured output schema, is
// a PROVIDER_ERROR (the run is recorded failed). Asynchronous runs (Async
// or a WebhookURL) are checked and resolved the same way, then recorded
// queued with their job, and returned at once.
//
// A run with an ApplicationID also notifies the application's subscription
// (completion.succeeded or completion.failed) when it finishes: the
// delivery is written with the final run record, sync or async.
//
// A Live run is drawn for its canvas's review queue (Sample) when it is
// recorded: a sync or streamed run once answered, an async one when
// accepted, so that its item, like its job, commits with its record.
func (s *Service) Run(ctx context.Context, params RunParams) (*Run, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if err := checkWebhookURL(params.WebhookURL); err != nil {
		return nil, err
	}
	ver, by, err := s.target(ctx, p, &params)
	if err != nil {
		return nil, err
	}
	if ver.IsWorkflow {
		return s.runWorkflow(ctx, params, ver)
	}
	run, err := s.prepare(ctx, p, params, ver, by)
	if err != nil {
		return nil, err
	}
	if run.Async {
		if err := s.models.Check(ctx, run.WorkspaceID, run.Request); err != nil {
			return nil, err
		}
		job := &queue.Job{WorkspaceID: run.WorkspaceID, Kind: JobKindCompletion, RefID: run.ID,
			MaxAttempts: completionMaxAttempts}
		if err := s.store.CreateRun(ctx, CreateRunParams{Run: run, Job: job, Sample: sample(params, run)}); err != nil {
			return nil, err
		}
		s.notify()
		return run, nil
	}
	req, err := s.models.Resolve(ctx, run.WorkspaceID, run.Request)
	if err != nil {
		return nil, err
	}
	if params.Started != nil {
		params.Started(run)
	}
	start := time.Now()
	res, err := s.models.Send(ctx, run.WorkspaceID, req, params.Stream)
	s.finish(run, res, err, time.Since(start))
	notify, nerr := s.notification(ctx, run, true)
	if nerr != nil {
		return nil, nerr
	}
	if werr := s.store.CreateRun(context.WithoutCancel(ctx), CreateRunParams{Run: run, Notify: notify,
		Sample: sample(params, run)}); werr != nil {
		return nil, werr
	}
	if len(notify) > 0 {
		s.notify()
	}
	if err != nil {
		return run, err
	}
	return run, nil
}

// servedBy says what served a run's version: the environment ("" when
// none is recorded), the publication ("" when the version was named) and,
// for a split, the variant.
type servedBy struct {
	envName       string
	publicationID string
	variant       *int
}

// target checks the canvas and application of params (setting CanvasID
// from the application when it is empty) and resolves the version to run
// and what served it.
func (s *Service) target(ctx context.Context, p *canvas.Principal, params *RunParams) (*canvas.Version, servedBy, error) {
	app, err := s.application(ctx, p, params)
	if err != nil {
		return nil, servedBy{}, err
	}
	if uuid.Validate(params.CanvasID) != nil {
		return nil, servedBy{}, canvas.Invalid("Request failed validation.",
			canvas.Detail{Path: "/json/canvas_id", Message: "must be a UUID"})
	}
	if err := env.CheckAssignmentKey(params.AssignmentKey, "/json/assignment_key"); err != nil {
		return nil, servedBy{}, err
	}
	return s.resolve(ctx, p, *params, app)
}

// prepare renders the messages of ver, resolves who serves its model and
// its fallbacks, and returns the run to record, not yet stored.
func (s *Service) prepare(ctx context.Context, p *canvas.Principal, params RunParams, ver *canvas.Version, by servedBy) (*Run, error) {
	msgs, defs, includes, err := s.resolveIncludes(ctx, ver, params.Includes)
	if err != nil {
		return nil, err
	}
	rendered, err := model.RenderMax(msgs, defs, params.Variables, s.models.MaxPromptBytes())
	if err != nil {
		return nil, err
	}
	rr, err := s.settings(ctx, p, params.CanvasID, ver.Configuration, params.Settings)
	if err != nil {
		return nil, err
	}
	rr.Messages = append(model.WithUserMessages(rendered, params.Messages...), params.Conversation...)
	now := s.now().UTC()
	return &Run{
		ID: s.newID(), WorkspaceID: p.WorkspaceID, Kind: KindCompletion, CanvasID: params.CanvasID,
		VersionID: ver.ID, EnvironmentName: by.envName, PublicationID: by.publicationID, Variant: by.variant,
		ApplicationID: params.ApplicationID, Includes: includes,
		Model: rr.Model, Status: StatusQueued, Async: params.Async || params.WebhookURL != "",
		Stream:    params.Stream != nil && !params.Async && params.WebhookURL == "",
		Variables: params.Variables, Request: *rr, WebhookURL: params.WebhookURL, ForwardHeaders: params.ForwardHeaders,
		CreatedBy: p.Actor(), CreatedAt: now, UpdatedAt: now,
	}, nil
}

// resolveIncludes returns ver's messages and variable definitions with
// its includes resolved (env.Service.Resolve, pinned by pins), and what
// they resolved to; a version without includes is returned as it is.
func (s *Service) resolveIncludes(ctx context.Context, ver *canvas.Version, pins []canvas.Include) ([]canvas.Message, []canvas.Variable, []canvas.Include, error) {
	if !canvas.VersionHasIncludes(ver) {
		return ver.Messages, ver.Variables, nil, nil
	}
	res, err := s.envs.Resolve(ctx, ver, pins)
	if err != nil {
		return nil, nil, nil, err
	}
	return res.Messages, res.Variables, res.Includes, nil
}

// Pin returns what the includes of a version of a canvas resolve to now,
// for a run that executes later with them (RunParams.Includes). It
// requires the viewer role and access to the canvas.
func (s *Service) Pin(ctx context.Context, canvasID, versionID string) ([]canvas.Include, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, canvasID); err != nil {
		return nil, err
	}
	ver, err := s.canvases.GetVersion(ctx, p.WorkspaceID, versionID)
	if err != nil {
		return nil, err
	}
	_, _, includes, err := s.resolveIncludes(ctx, ver, nil)
	return includes, err
}

// resolve returns the version a completion runs and what served it.
func (s *Service) resolve(ctx context.Context, p *canvas.Principal, params RunParams, app *webhook.Application) (*canvas.Version, servedBy, error) {
	assigned := func(a *env.Assignment, envName string) (*canvas.Version, servedBy, error) {
		return a.Version, servedBy{envName: envName, publicationID: a.PublicationID, variant: a.Variant}, nil
	}
	if params.EnvironmentName != "" {
		name, err := env.CheckPublishName(params.EnvironmentName)
		if err != nil {
			return nil, servedBy{}, err
		}
		if params.VersionID != "" || params.ApplicationID != "" {
			return nil, servedBy{}, canvas.Invalid("environment_name cannot be combined with version_id or application_id.",
				canvas.Detail{Path: "/json/environment_name", Message: "cannot be combined with version_id or application_id"})
		}
		a, err := s.envs.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: params.CanvasID, EnvName: name,
			AssignmentKey: params.AssignmentKey})
		if err != nil {
			return nil, servedBy{}, err
		}
		return assigned(a, name)
	}
	if params.VersionID == "" && params.ApplicationID == "" {
		// The promoted version: ActiveVersion checks the canvas too, so the
		// usual path reads it once; the canvas is read again only to tell
		// a missing canvas from one that has nothing promoted.
		a, err := s.envs.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: params.CanvasID, EnvName: env.Production,
			AssignmentKey: params.AssignmentKey})
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			if _, cerr := s.canvas(ctx, p, params.CanvasID); cerr != nil {
				return nil, servedBy{}, cerr
			}
			return nil, servedBy{}, canvas.Errorf(canvas.ENOTFOUND, "The canvas has no promoted version.")
		} else if err != nil {
			return nil, servedBy{}, err
		}
		return assigned(a, "")
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, servedBy{}, err
	}
	if params.VersionID == "" {
		a, err := s.envs.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: c.ID, EnvName: app.EnvironmentName,
			AssignmentKey: params.AssignmentKey})
		if err != nil {
			return nil, servedBy{}, err
		}
		return assigned(a, app.EnvironmentName)
	}
	if uuid.Validate(params.VersionID) != nil {
		return nil, servedBy{}, canvas.NotFound("version")
	}
	v, err := s.canvases.GetVersion(ctx, p.WorkspaceID, params.VersionID)
	if err != nil {
		return nil, servedBy{}, err
	}
	if v.PromptID != c.ID {
		return nil, servedBy{}, canvas.NotFound("version")
	}
	return v, servedBy{}, nil
}

// application returns the application a run with an ApplicationID (and no
// EnvironmentName, which cannot be combined with it) targets, or nil, and
// sets params.CanvasID to its canvas when empty. Unknown applications, and
// all of them when the service has no Notifier, are NOT_FOUND.
func (s *Service) application(ctx context.Context, p *canvas.Principal, params *RunParams) (*webhook.Application, error) {
	if params.ApplicationID == "" || params.EnvironmentName != "" {
		return nil, nil
	}
	if s.notifier == nil || uuid.Validate(params.ApplicationID) != nil {
		return nil, canvas.NotFound("application")
	}
	app, err := s.notifier.Application(ctx, p.WorkspaceID, params.ApplicationID)
	if err != nil {
		return nil, err
	}
	switch {
	case app.PromptID == nil:
		return nil, canvas.Invalid("The application has no canvas to run.",
			canvas.Detail{Path: "/json/application_id", Message: "the application has no canvas (promptId)"})
	case params.CanvasID == "":
		params.CanvasID = *app.PromptID
	case params.CanvasID != *app.PromptID:
		return nil, canvas.Invalid("canvas_id is not the application's canvas.",
			canvas.Detail{Path: "/json/canvas_id", Message: "must be the canvas of the application, or omitted"})
	}
	return app, nil
}

// settings merges the override over the version's configuration, checks
// that a structured output schema given in the override compiles, and
// resolves who serves the model and each fallback (model.Caller.Target)
// within what the canvas may use.
func (s *Service) settings(ctx context.Context, p *canvas.Principal, canvasID string, cfg canvas.Configuration, o *Settings) (*model.Request, error) {
	rr := &model.Request{Model: cfg.Model, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens,
		TopP: cfg.TopP, StructuredOutput: cfg.StructuredOutput, Tools: cfg.Functions, ToolChoice: cfg.ToolChoice}
	want := model.Want{Model: cfg.Model, Provider: cfg.Provider, CredentialID: cfg.CredentialID,
		Path: "/json/configuration/model", CredentialPath: "/json/configuration/credentialId"}
	if o != nil {
		if o.Model != nil {
			want.Model, want.Path = *o.Model, "/json/settings/model"
			if *o.Model != cfg.Model {
				// Another model is another vendor's, unless named so.
				want.Provider = ""
			}
		}
		if o.CredentialID != nil {
			want.CredentialID, want.CredentialPath = *o.CredentialID, "/json/settings/credentialId"
		}
		if o.Temperature != nil {
			rr.Temperature = o.Temperature
		}
		if o.MaxTokens != nil {
			rr.MaxTokens = o.MaxTokens
		}
		if o.TopP != nil {
			rr.TopP = o.TopP
		}
		if so := o.StructuredOutput; so != nil {
			if so.Enabled && len(so.Schema) > 0 {
				if _, err := model.CompileSchemaAt("/json/settings/structuredOutput/schema", so.Schema); err != nil {
					return nil, err
				}
			}
			rr.StructuredOutput = so
		}
	}
	if want.Model == "" {
		want.Model = model.EchoModel
	}
	scope, err := s.scope(ctx, p, canvasID, want, cfg.Fallbacks)
	if err != nil {
		return nil, err
	}
	t, err := s.models.Target(ctx, scope, want)
	if err != nil {
		return nil, err
	}
	rr.Model, rr.Provider, rr.CredentialID = t.Model, t.Provider, t.CredentialID
	for i, f := range cfg.Fallbacks {
		path := fmt.Sprintf("/json/configuration/fallbacks/%d", i)
		ft, err := s.models.Target(ctx, scope, model.Want{Model: f.Model, CredentialID: f.CredentialID,
			Path: path + "/model", CredentialPath: path + "/credentialId"})
		if err != nil {
			return nil, err
		}
		rr.Fallbacks = append(rr.Fallbacks, ft)
	}
	return rr, nil
}

// scope returns what a run of the canvas may use. Only a run that may need
// a credential reads the canvas for its project and allowedCredentials: a
// run of the offline echo model without fallbacks needs none.
func (s *Service) scope(ctx context.Context, p *canvas.Principal, canvasID string, want model.Want, fallbacks []canvas.Fallback) (model.Scope, error) {
	scope := model.Scope{WorkspaceID: p.WorkspaceID}
	if want.Model == model.EchoModel && want.CredentialID == "" && len(fallbacks) == 0 {
		return scope, nil
	}
	c, err := s.canvas(ctx, p, canvasID)
	if err != nil {
		return scope, err
	}
	return model.CanvasScope(p.WorkspaceID, c.ProjectID, c.AllowedCredentials), nil
}

// execute calls the model for run (model.Caller.Call): its files are
// resolved in the run's workspace, since runs store file addresses only and
// every execution reads the files again.
func (s *Service) execute(ctx context.Context, run *Run, emit func(model.Chunk) error) (*model.Result, error) {
	return s.models.Call(ctx, run.WorkspaceID, run.Request, emit)
}

// finish records the outcome of an execution on run.
func (s *Service) finish(run *Run, res *model.Result, err error, latency time.Duration) {
	now := s.now().UTC()
	run.LatencyMs = latency.Milliseconds()
	run.UpdatedAt, run.CompletedAt = now, &now
	if res != nil {
		run.Usage, run.Cost = res.Usage, res.Cost
		run.CredentialID, run.Provider = res.Target.CredentialID, res.Target.Provider
	}
	if err != nil {
		run.Status, run.Error, run.Result = StatusFailed, runError(err), nil
		return
	}
	run.Status = StatusCompleted
	run.Result = newResponse(run.ID, run.CreatedAt, run.VersionID, res)
}
