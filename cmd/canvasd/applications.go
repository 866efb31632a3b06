package main

import (
	"fmt"
	"time"

	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// publicationOutbox returns the environment service's outbox: each new
// publication commits with the job that notifies the subscriptions of its
// canvas' applications (publication.created, data: the publication item),
// which the worker fans out (Notifier.HandleCanvasEvent).
func publicationOutbox(n *webhook.Notifier) env.PublishOutbox {
	return func(workspaceID string, pub *env.Publication) (*queue.Job, error) {
		return n.CanvasEventJob(workspaceID, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
	}
}

// generationOutbox returns the generation service's outbox: each finished
// generation commits with the job that notifies the subscriptions of its
// canvas' applications (generation.completed, data: the generation).
func generationOutbox(n *webhook.Notifier) func(*testcase.Generation) (*queue.Job, error) {
	return func(g *testcase.Generation) (*queue.Job, error) {
		return n.CanvasEventJob(g.WorkspaceID, g.PromptID, g.ID, webhook.EventGenerationCompleted, g)
	}
}

// applicationConfig holds the settings of applications.
type applicationConfig struct {
	// SecretOverlap is how long a rotated-out signing secret stays valid
	// (CANVAS_WEBHOOK_SECRET_OVERLAP, a Go duration, default 24h).
	SecretOverlap time.Duration
}

// applicationFlags reads the application settings, which only the
// environment carries.
func (c *applicationConfig) applicationFlags(env func(string) string) error {
	c.SecretOverlap = webhook.DefaultSecretOverlap
	if v := env("CANVAS_WEBHOOK_SECRET_OVERLAP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("CANVAS_WEBHOOK_SECRET_OVERLAP: %q is not a positive duration", v)
		}
		c.SecretOverlap = d
	}
	return nil
}

// applications returns the application service of the reference server.
func applications(cfg config, db store.Store) *webhook.ApplicationService {
	return webhook.NewApplicationService(webhook.ApplicationOptions{Store: db, Canvases: db,
		SecretOverlap: cfg.SecretOverlap})
}
