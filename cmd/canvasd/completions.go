package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// providers returns the model registry of the reference server: the
// offline echo model always, and, when CANVAS_OPENAI_BASE_URL is set, the
// OpenAI-compatible back end serving every other model name.
func providers(cfg config) (*completion.Registry, error) {
	reg := completion.NewRegistry(completion.NewEcho(completion.EchoOptions{}))
	if cfg.OpenAIBaseURL != "" {
		oa, err := completion.NewOpenAI(completion.OpenAIOptions{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey})
		if err != nil {
			return nil, fmt.Errorf("CANVAS_OPENAI_BASE_URL: %w", err)
		}
		reg.RegisterPrefix("", oa)
	}
	return reg, nil
}

// workerConfig is the queue worker's part of the configuration.
type workerConfig struct {
	// WorkerConcurrency bounds the jobs of the model lane run at once:
	// async completions and tasks, generations, workflow runs
	// (--worker-concurrency, CANVAS_WORKER_CONCURRENCY).
	WorkerConcurrency int
	// DeliveryConcurrency bounds the jobs of the delivery lane run at once:
	// webhook deliveries and their fan-outs (--delivery-concurrency,
	// CANVAS_DELIVERY_CONCURRENCY).
	DeliveryConcurrency int
}

// workerFlags registers the worker's flags, with their environment
// variables as defaults; a malformed environment value is an error.
func (c *workerConfig) workerFlags(fs *flag.FlagSet, env func(string) string) error {
	model, err := positiveEnv(env, "CANVAS_WORKER_CONCURRENCY", queue.DefaultModelConcurrency)
	if err != nil {
		return err
	}
	delivery, err := positiveEnv(env, "CANVAS_DELIVERY_CONCURRENCY", queue.DefaultDeliveryConcurrency)
	if err != nil {
		return err
	}
	fs.IntVar(&c.WorkerConcurrency, "worker-concurrency", model,
		"how many model `jobs` (async completions, generations, workflow runs) run at once (env CANVAS_WORKER_CONCURRENCY)")
	fs.IntVar(&c.DeliveryConcurrency, "delivery-concurrency", delivery,
		"how many webhook delivery `jobs` run at once (env CANVAS_DELIVERY_CONCURRENCY)")
	return nil
}

// positiveEnv returns the positive number in the environment variable
// name, or def when it is unset.
func positiveEnv(env func(string) string, name string, def int) (int, error) {
	v := env(name)
	if v == "" {
		return def, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive number", name, v)
	}
	return i, nil
}

// workerOptions returns the options of the queue worker: its lanes'
// concurrency and the logger.
func (c *workerConfig) workerOptions(logger *slog.Logger) queue.WorkerOptions {
	return queue.WorkerOptions{Logger: logger, Lanes: map[string]queue.LaneOptions{
		queue.LaneModel:    {Concurrency: c.WorkerConcurrency},
		queue.LaneDelivery: {Concurrency: c.DeliveryConcurrency},
	}}
}

// completions builds the completion service and the queue worker that runs
// its background jobs (async completions, tasks) in the model lane and
// delivers webhook notifications in the delivery lane. The service wakes
// the worker after each enqueue. File
// variables resolve vault:// addresses through files, and fetch public
// URLs through the SSRF guard (CANVAS_ALLOW_PRIVATE_NETWORKS) with the
// upload size limit (CANVAS_MAX_FILE_SIZE).
func completions(cfg config, db store.Store, envs *env.Service, files *vault.Service, notifier *webhook.Notifier,
	workflows completion.Workflows, logger *slog.Logger) (*completion.Service, *queue.Worker, error) {
	reg, err := providers(cfg)
	if err != nil {
		return nil, nil, err
	}
	worker := queue.NewWorker(db, cfg.workerOptions(logger))
	svc := completion.NewService(completion.Options{Store: db, Canvases: db, Environments: envs,
		Providers: reg, Notify: worker.Notify, Notifier: notifier, Workflows: workflows,
		Files: completion.FileOptions{Vault: completion.VaultFiles(files),
			AllowPrivateNetworks: cfg.AllowPrivateNetworks, MaxSize: cfg.MaxFileSize}})
	for _, kind := range completion.JobKinds() {
		worker.HandleIn(queue.LaneModel, kind, svc.HandleJob)
	}
	worker.HandleIn(queue.LaneDelivery, webhook.JobKind, deliverer(cfg, db, logger).Handle)
	return svc, worker, nil
}
