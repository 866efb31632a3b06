package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/promptcanvas/promptcanvas/review"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Options configure an Engine. Store and Blobs are required; every other
// zero field takes its default.
type Options struct {
	// Store persists everything. Open does not close it: the Engine of
	// OpenSQLite or pgengine.Open closes the store it opened (Close).
	Store store.Store
	// Close, when set, is called by Engine.Close once the background work
	// has stopped, to release what the Engine's opener acquired for it;
	// OpenSQLite and pgengine.Open set it to close the database they open.
	Close func() error
	// Changes tells whether anything was committed since a cached value
	// was built: the served-version and API-key caches serve an entry only
	// while Changes says nothing changed. Nil takes the Store when it
	// implements canvas.ChangeVersioner; with none, nothing is cached.
	Changes canvas.ChangeVersioner
	// Providers maps model names to the server's own back ends (the
	// offline echo model, a server-wide back end); nil serves the echo
	// model alone.
	Providers *model.Registry
	// ProviderKinds build the providers of workspace credentials, by
	// provider name (canvas.Provider*): an embedder registers the vendor
	// packages it links, for example model.Kinds{canvas.ProviderAnthropic:
	// anthropic.Factory}. A credential of a kind missing here serves
	// nothing.
	ProviderKinds model.Kinds
	// Blobs holds the bytes of uploaded files.
	Blobs vault.Blobs
	// Secrets seals and opens the keys of credentials and the secrets of
	// webhook evaluators. Nil leaves the Engine unable to store or open
	// them (Credentials refuses with CONFLICT, Experiments refuses webhook
	// evaluators); OpenSQLite fills it from the data directory's key file.
	Secrets *credential.KeyRing
	// BaseURL prefixes upload URLs, for example "http://127.0.0.1:8080".
	BaseURL string
	// Actions adds an embedder's own workflow actions to the built-in
	// ones, by action id.
	Actions map[string]workflow.Action
	// Limits bound the engine's work and what it keeps.
	Limits Limits
	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now canvas.Clock
	// Metrics is the registry the engine's metrics are registered on (and
	// the server's, when it mounts the engine); nil makes a new one. The
	// global registry is never used.
	Metrics *prometheus.Registry
	// TracerProvider makes the spans of jobs, model calls, webhook
	// requests and store commits; nil records nothing.
	TracerProvider trace.TracerProvider
}

// Limits bound the work an Engine takes on and how long it keeps what it
// did. Zero fields take the documented defaults.
type Limits struct {
	// ModelConcurrency bounds the model lane's jobs run at once:
	// asynchronous completions and tasks, test case generations, workflow
	// runs, experiments (queue.DefaultModelConcurrency). It also bounds the
	// case runs one experiment runs at once.
	ModelConcurrency int
	// DeliveryConcurrency bounds the delivery lane's jobs run at once:
	// webhook deliveries and their fan-outs
	// (queue.DefaultDeliveryConcurrency). A slow receiver holds slots of
	// this lane only, never those of model work.
	DeliveryConcurrency int
	// MaintenanceConcurrency bounds the maintenance lane's jobs run at
	// once: workflow deadlines, file expiry, the purge of ended records
	// (queue.DefaultMaintenanceConcurrency).
	MaintenanceConcurrency int
	// MaxFileSize bounds an upload, in bytes (vault.DefaultMaxSize).
	MaxFileSize int64
	// MaxPromptBytes bounds a rendered prompt, its inlined files included
	// (model.DefaultMaxRenderBytes, the default bound of a request body).
	MaxPromptBytes int
	// UploadURLLifetime is how long an upload URL works
	// (vault.DefaultURLLifetime).
	UploadURLLifetime time.Duration
	// AllowPrivateNetworks lets webhooks and public file URLs reach
	// loopback and private addresses; off by default.
	AllowPrivateNetworks bool
	// MaxConsecutiveDeliveryFailures is how many deliveries of a
	// subscription may fail for good in a row before it is disabled
	// (webhook.DefaultMaxConsecutiveFailures).
	MaxConsecutiveDeliveryFailures int
	// SecretOverlap is how long a rotated-out signing secret stays valid
	// (webhook.DefaultSecretOverlap).
	SecretOverlap time.Duration
	// Retention is how long ended records are kept.
	Retention Retention
}

// Retention is how long each kind of ended record is kept; zero keeps it
// forever. Interval is the time between two purges (retention's default
// when zero).
type Retention struct {
	Jobs, Deliveries, Runs, WorkflowRuns time.Duration
	// AuditEvents is how long audit events are kept (zero: forever);
	// the purge keeps each workspace's chain an unbroken tail.
	AuditEvents time.Duration
	Interval    time.Duration
}

// Engine is Prompt Canvas in-process: every service, built over one Store,
// and the worker that does their background work. Build it with Open (or
// OpenSQLite, or pgengine.Open for PostgreSQL), call Run for the background
// work, and Close when done. The services are safe for concurrent use; each
// reads the caller from its context (canvas.NewContext).
type Engine struct {
	Store        store.Store
	Canvases     *canvas.Service
	Environments *env.Service
	Models       *model.Caller
	Completions  *completion.Service
	Workflows    *workflow.Service
	TestCases    *testcase.Service
	Generations  *testcase.GenerationService
	// Review is the review queue of live runs (see completion.Sample).
	Review *review.Service
	// Experiments runs a canvas's test cases against its versions and
	// keeps saved evaluators.
	Experiments *experiment.Service
	// Audit reads the workspaces' audit logs, which the store writes with
	// each change.
	Audit        *audit.Service
	Files        *vault.Service
	Applications *webhook.ApplicationService
	Deliveries   *webhook.DeliveryService
	// Credentials manages the workspaces' credentials and model prices,
	// and gives the model caller their keys (model.Credentials) and
	// prices (model.Prices).
	Credentials *credential.Service
	// Idempotency keeps the Idempotency-Keys of requests in the name of
	// this process.
	Idempotency *idempotency.Service
	// Changes is the change signal of the freshness-checked caches (nil
	// when there is none).
	Changes canvas.ChangeVersioner
	// Metrics holds the engine's metrics (Options.Metrics or its own).
	Metrics *prometheus.Registry
	// TracerProvider makes the engine's spans (Options.TracerProvider or
	// one that records nothing).
	TracerProvider trace.TracerProvider

	worker  *queue.Worker
	purger  *retention.Purger
	logger  *slog.Logger
	closeFn func() error

	mu      sync.Mutex
	running chan struct{}      // closed when Run returns; nil while not running
	stop    context.CancelFunc // stops a running Run
	closed  bool
}

// Open builds an Engine over opts.Store and makes sure the purge of ended
// records is scheduled. Nothing runs in the background until Run.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("engine: Options.Store is required")
	}
	if opts.Blobs == nil {
		return nil, errors.New("engine: Options.Blobs is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Changes == nil {
		opts.Changes, _ = opts.Store.(canvas.ChangeVersioner)
	}
	if opts.Metrics == nil {
		opts.Metrics = prometheus.NewRegistry()
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = noopTracerProvider()
	}
	lim := opts.Limits
	db := opts.Store
	e := &Engine{Store: db, Changes: opts.Changes, Metrics: opts.Metrics, TracerProvider: opts.TracerProvider,
		logger: opts.Logger, closeFn: opts.Close}
	tel, err := newTelemetry(opts.Metrics, opts.TracerProvider)
	if err != nil {
		return nil, fmt.Errorf("engine: metrics: %w", err)
	}
	if o, ok := db.(store.Observable); ok {
		o.SetObserver(storeObserver{tel})
	}
	if ss, ok := db.(queue.StatsStore); ok {
		if err := opts.Metrics.Register(newQueueCollector(tel, ss)); err != nil {
			return nil, fmt.Errorf("engine: metrics: %w", err)
		}
	}

	// The worker comes first: every service that enqueues work wakes it,
	// and those that cancel work stop it in this process at once.
	// Its lanes keep each kind of work from holding the slots of another.
	e.worker = queue.NewWorker(db, queue.WorkerOptions{Logger: opts.Logger, Now: opts.Now,
		Lanes: map[string]queue.LaneOptions{
			queue.LaneModel:       {Concurrency: lim.ModelConcurrency},
			queue.LaneDelivery:    {Concurrency: lim.DeliveryConcurrency},
			queue.LaneMaintenance: {Concurrency: lim.MaintenanceConcurrency},
		}})
	notify, cancel := e.worker.Notify, e.worker.Cancel

	e.Files = vault.NewService(vault.Options{Store: db, Blobs: opts.Blobs, BaseURL: opts.BaseURL,
		URLLifetime: lim.UploadURLLifetime, MaxSize: lim.MaxFileSize, Now: opts.Now})
	e.Credentials = credential.NewService(credential.Options{Store: db, Projects: db, Keys: opts.Secrets,
		Changes: opts.Changes, Logger: opts.Logger, Now: opts.Now})
	e.Models = model.NewCaller(model.Options{Providers: opts.Providers, MaxPromptBytes: lim.MaxPromptBytes,
		Files: model.FileOptions{Vault: model.VaultFiles(e.Files), AllowPrivateNetworks: lim.AllowPrivateNetworks,
			MaxSize: lim.MaxFileSize},
		Observe: tel.observeModel, Kinds: opts.ProviderKinds, Credentials: e.Credentials, Prices: e.Credentials})
	notifier := webhook.NewNotifier(webhook.NotifierOptions{Store: db, Notify: notify, Now: opts.Now})
	// A publication is queued for delivery only when a subscription can
	// receive it, which the store decides inside the publish's
	// transaction (env.PublishEvent).
	e.Environments = env.NewService(env.Options{Store: db, Canvases: db, Changes: opts.Changes, Notify: notify,
		Event: &env.PublicationEvent{Type: webhook.EventPublicationCreated,
			Job: func(workspaceID string, pub *env.Publication) (*queue.Job, error) {
				return notifier.CanvasEventJob(workspaceID, pub.PromptID, pub.PublicationID,
					webhook.EventPublicationCreated, pub)
			}},
		Published: tel.publishHook,
		RequestEvents: &env.RequestEvents{Types: map[string]string{
			env.StepCreated:   webhook.EventPublicationRequestCreated,
			env.StepApproved:  webhook.EventPublicationRequestApproved,
			env.StepRejected:  webhook.EventPublicationRequestRejected,
			env.StepWithdrawn: webhook.EventPublicationRequestWithdrawn,
			env.StepPublished: webhook.EventPublicationRequestPublished,
		}, Job: func(workspaceID, typ string, r *env.PublicationRequest) (*queue.Job, error) {
			return notifier.CanvasEventJob(workspaceID, r.ResourceID, r.ID, typ, r)
		}}})
	if err := RegisterCacheMetrics(opts.Metrics, "served_version", e.Environments.CacheStats); err != nil {
		return nil, fmt.Errorf("engine: metrics: %w", err)
	}

	actions := workflow.Builtins(workflow.BuiltinOptions{Models: e.Models, Includes: e.Environments,
		Scope: func(ctx context.Context, workspaceID, canvasID string) (model.Scope, error) {
			c, err := db.GetCanvas(ctx, canvas.GetCanvasParams{WorkspaceID: workspaceID, ID: canvasID})
			if err != nil {
				return model.Scope{}, err
			}
			return model.CanvasScope(workspaceID, c.ProjectID, c.AllowedCredentials), nil
		}})
	for id, a := range opts.Actions {
		actions.Register(id, a)
	}
	e.Workflows = workflow.NewService(workflow.Options{Store: db, Canvases: db, Actions: actions, Notifier: notifier,
		Files: e.Files, Notify: notify, Cancel: cancel, Logger: opts.Logger, Now: opts.Now})
	e.Canvases = canvas.NewService(canvas.Options{Store: db, Workflows: e.Workflows, Promoter: e.Environments, Includes: e.Environments,
		Credentials: e.Credentials})
	e.Completions = completion.NewService(completion.Options{Store: db, Canvases: db, Environments: e.Environments,
		Models: e.Models, Notify: notify, Notifier: notifier, Workflows: e.Workflows, Now: opts.Now})
	e.TestCases = testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
	e.Generations = testcase.NewGenerationService(testcase.GenerationOptions{TestCases: e.TestCases, Store: db,
		Runner: e.Completions, Notify: notify, Cancel: cancel,
		FinishedJob: func(g *testcase.Generation) (*queue.Job, error) {
			return notifier.CanvasEventJob(g.WorkspaceID, g.PromptID, g.ID, webhook.EventGenerationCompleted, g)
		}})
	e.Review = review.NewService(review.Options{Store: db, Canvases: db, Runs: db, TestCases: e.TestCases})
	sender := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: lim.AllowPrivateNetworks,
		WrapTransport: tel.webhookTransport})
	concurrency := lim.ModelConcurrency
	if concurrency <= 0 {
		concurrency = queue.DefaultModelConcurrency
	}
	var sealer experiment.Sealer // nil, not a nil *KeyRing, when there is no key ring
	if opts.Secrets != nil {
		sealer = opts.Secrets
	}
	e.Experiments = experiment.NewService(experiment.Options{Store: db, Canvases: db, TestCases: db, Sealer: sealer,
		Environments: e.Environments, Runner: e.Completions, Models: e.Models,
		Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: lim.AllowPrivateNetworks,
			Timeout: experiment.MaxWebhookTimeoutMs * time.Millisecond, WrapTransport: tel.webhookTransport}),
		Concurrency: concurrency, Notify: notify, Cancel: cancel,
		EndedJob: func(x *experiment.Experiment) (*queue.Job, error) {
			return notifier.CanvasEventJob(x.WorkspaceID, x.PromptID, x.ID, webhook.EventExperimentCompleted, x)
		}})
	e.Audit = audit.NewService(db)
	e.Applications = webhook.NewApplicationService(webhook.ApplicationOptions{Store: db, Canvases: db,
		SecretOverlap: lim.SecretOverlap})
	e.Deliveries = webhook.NewDeliveryService(webhook.DeliveryOptions{Log: db, Applications: db, Canvases: db, Sender: sender})
	deliverer := &webhook.Deliverer{Sender: sender, Logger: opts.Logger, Log: db, Subscriptions: db,
		MaxConsecutiveFailures: lim.MaxConsecutiveDeliveryFailures}
	r := lim.Retention
	e.purger = retention.New(retention.Options{Store: db, Jobs: r.Jobs, Deliveries: r.Deliveries, Runs: r.Runs,
		WorkflowRuns: r.WorkflowRuns, AuditEvents: r.AuditEvents, Interval: r.Interval, Logger: opts.Logger, Now: opts.Now})

	// The Idempotency-Keys this process holds are held in its own name.
	e.Idempotency = idempotency.NewService(idempotency.Options{Store: db, Now: opts.Now})

	// Each handler is wrapped for its spans and metrics.
	w := handlerRegistrar{e.worker, tel}
	for _, kind := range completion.JobKinds() {
		w.HandleIn(queue.LaneModel, kind, e.Completions.HandleJob)
	}
	w.HandleIn(queue.LaneModel, testcase.JobKindGenerate, e.Generations.HandleJob)
	w.HandleIn(queue.LaneModel, workflow.JobKindRun, e.Workflows.HandleJob)
	w.HandleIn(queue.LaneModel, experiment.JobKindRun, e.Experiments.HandleJob)
	w.HandleIn(queue.LaneDelivery, webhook.JobKind, deliverer.Handle)
	w.HandleIn(queue.LaneDelivery, webhook.JobKindFanout, notifier.HandleFanout)
	w.HandleIn(queue.LaneDelivery, webhook.JobKindCanvasEvent, notifier.HandleCanvasEvent)
	w.HandleIn(queue.LaneMaintenance, workflow.JobKindDeadline, e.Workflows.HandleDeadline)
	w.HandleIn(queue.LaneMaintenance, vault.JobKindExpire, e.Files.HandleExpireJob)
	w.HandleIn(queue.LaneMaintenance, retention.JobKind, e.purger.Handle)
	// One purge job is queued whatever the number of starts and processes
	// on the same data: Schedule queues none when one is.
	if _, err := e.purger.Schedule(ctx); err != nil {
		return nil, fmt.Errorf("engine: schedule the purge of ended records: %w", err)
	}
	return e, nil
}

// Bootstrap prepares a new database as canvasd does on its first start:
// the default workspace and an admin API key, whose token it returns once
// (token when it is a UUID, else a random one). On a database that has a
// workspace already it does nothing and reports created false.
func (e *Engine) Bootstrap(ctx context.Context, token string) (created bool, adminToken string, err error) {
	return canvas.Bootstrap(ctx, e.Store, token)
}

// ModelKinds returns the queue job kinds that run in the model lane:
// asynchronous completions and tasks, workflow runs and test case
// generations. A limit on queued model work counts these.
func (e *Engine) ModelKinds() []string { return e.worker.LaneKinds(queue.LaneModel) }

// ModelLoad returns a reading of this engine's model lane: its slots, the
// jobs it runs, and how long its recent jobs took.
func (e *Engine) ModelLoad() queue.LaneLoad { return e.worker.LaneLoad(queue.LaneModel) }

// QueuedModelWork counts the model jobs (ModelKinds) of workspaceID that
// wait in the queue, every process's, whenever they are due.
func (e *Engine) QueuedModelWork(ctx context.Context, workspaceID string) (int, error) {
	return e.Store.CountQueuedJobs(ctx, workspaceID, e.ModelKinds())
}

// DueModelWork reads the model jobs (ModelKinds) due in the queue, every
// process's. ok is false when the Store does not report its queue
// (queue.StatsStore).
func (e *Engine) DueModelWork(ctx context.Context) (due queue.Due, ok bool, err error) {
	stats, ok := e.Store.(queue.StatsStore)
	if !ok {
		return queue.Due{}, false, nil
	}
	all, err := stats.QueueStats(ctx)
	if err != nil {
		return queue.Due{}, true, err
	}
	return queue.DueOf(all, e.ModelKinds()), true, nil
}

// Ping reports whether the engine's Store answers: whether the engine can
// serve.
func (e *Engine) Ping(ctx context.Context) error { return e.Store.Ping(ctx) }

// Run does the engine's background work until ctx ends: it runs the queue
// worker, each kind of job in its lane. Once
// ctx ends it lets the running jobs finish (or gives them back to the
// queue) and returns. Run may be called once; after Close it returns nil
// at once.
func (e *Engine) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	e.mu.Lock()
	switch {
	case e.closed:
		// A Run started as the engine closes (go e.Run; defer e.Close)
		// has nothing left to do.
		e.mu.Unlock()
		return nil
	case e.running != nil:
		e.mu.Unlock()
		return errors.New("engine: Run called twice")
	}
	done := make(chan struct{})
	e.running, e.stop = done, stop
	e.mu.Unlock()
	defer close(done)

	return e.worker.Run(ctx)
}

// Close stops a running Run and waits for it to return, then calls
// Options.Close (which closes the store OpenSQLite or pgengine.Open
// opened). Close is safe to call more than once.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	done, stop := e.running, e.stop
	e.mu.Unlock()
	if done != nil {
		stop()
		<-done
	}
	if e.closeFn != nil {
		return e.closeFn()
	}
	return nil
}
