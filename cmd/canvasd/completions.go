package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/promptcanvas/promptcanvas/model"
)

// providers returns the model registry of the reference server: the
// offline echo model always, and, when CANVAS_OPENAI_BASE_URL is set, the
// OpenAI-compatible back end serving every other model name.
func providers(cfg config) (*model.Registry, error) {
	reg := model.NewRegistry(model.NewEcho(model.EchoOptions{}))
	if cfg.OpenAIBaseURL != "" {
		oa, err := model.NewOpenAI(model.OpenAIOptions{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey})
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
