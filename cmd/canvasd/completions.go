package main

import (
	"flag"
	"fmt"
	"net/http"
	"strconv"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
	"github.com/promptcanvas/promptcanvas/model/vendors"
	"github.com/promptcanvas/promptcanvas/queue"
)

// providers returns the model registry of the reference server: the
// offline echo model always, and, when CANVAS_OPENAI_BASE_URL is set, the
// OpenAI-compatible back end serving every other model name.
func providers(cfg config) (*model.Registry, error) {
	reg := model.NewRegistry(model.NewEcho(model.EchoOptions{}))
	if cfg.OpenAIBaseURL != "" {
		// The back end's requests carry the model call's trace context.
		oa, err := openai.New(openai.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey,
			HTTPClient: &http.Client{Transport: engine.TraceTransport(openAITransport())}})
		if err != nil {
			return nil, fmt.Errorf("CANVAS_OPENAI_BASE_URL: %w", err)
		}
		reg.RegisterPrefix("", oa)
	}
	return reg, nil
}

// providerKinds returns the vendor providers the reference server runs
// workspace credentials on: every provider of the project. Their requests
// carry the model call's trace context.
func providerKinds() model.Kinds {
	return vendors.Kinds(func(c model.Credential) *http.Client {
		return &http.Client{Transport: engine.TraceTransport(model.VendorTransport(c.Settings.Timeout()))}
	})
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

// openAITransport is the transport the OpenAI-compatible provider would
// make itself: the default one, waiting at most openai.DefaultTimeout
// for response headers.
func openAITransport() http.RoundTripper { return model.VendorTransport(openai.DefaultTimeout) }
