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

// defaultWorkerConcurrency is how many jobs the worker runs at once unless
// configured: jobs mostly wait (on a model, a webhook receiver, a workflow
// run's steps), and a workflow run holds its slot while it runs.
const defaultWorkerConcurrency = 16

// workerConfig is the queue worker's part of the configuration.
type workerConfig struct {
	// WorkerConcurrency bounds the jobs the worker runs at once
	// (--worker-concurrency, CANVAS_WORKER_CONCURRENCY).
	WorkerConcurrency int
}

// workerFlags registers the worker's flags, with their environment
// variables as defaults; a malformed environment value is an error.
func (c *workerConfig) workerFlags(fs *flag.FlagSet, env func(string) string) error {
	n := defaultWorkerConcurrency
	if v := env("CANVAS_WORKER_CONCURRENCY"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i <= 0 {
			return fmt.Errorf("CANVAS_WORKER_CONCURRENCY: %q is not a positive number", v)
		}
		n = i
	}
	fs.IntVar(&c.WorkerConcurrency, "worker-concurrency", n,
		"how many background `jobs` run at once (env CANVAS_WORKER_CONCURRENCY)")
	return nil
}

// completions builds the completion service and the queue worker that runs
// its background jobs (async completions, tasks) and delivers webhook
// notifications. The service wakes the worker after each enqueue. File
// variables resolve vault:// addresses through files, and fetch public
// URLs through the SSRF guard (CANVAS_ALLOW_PRIVATE_NETWORKS) with the
// upload size limit (CANVAS_MAX_FILE_SIZE).
func completions(cfg config, db store.Store, envs *env.Service, files *vault.Service, notifier *webhook.Notifier,
	workflows completion.Workflows, logger *slog.Logger) (*completion.Service, *queue.Worker, error) {
	reg, err := providers(cfg)
	if err != nil {
		return nil, nil, err
	}
	worker := queue.NewWorker(db, queue.WorkerOptions{Logger: logger, Concurrency: cfg.WorkerConcurrency})
	svc := completion.NewService(completion.Options{Store: db, Canvases: db, Environments: envs,
		Providers: reg, Notify: worker.Notify, Notifier: notifier, Workflows: workflows,
		Files: completion.FileOptions{Vault: completion.VaultFiles(files),
			AllowPrivateNetworks: cfg.AllowPrivateNetworks, MaxSize: cfg.MaxFileSize}})
	for _, kind := range completion.JobKinds() {
		worker.Handle(kind, svc.HandleJob)
	}
	worker.Handle(webhook.JobKind, deliverer(cfg, db, logger).Handle)
	return svc, worker, nil
}
