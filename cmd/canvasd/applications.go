package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// publishHook returns the environment service's hook that notifies the
// subscriptions of a canvas' applications of each new publication
// (publication.created, data: the publication item). A failure to enqueue
// is logged: the publication stands.
func publishHook(n *webhook.Notifier, logger *slog.Logger) env.PublishHook {
	return func(ctx context.Context, workspaceID string, pub *env.Publication) {
		err := n.NotifyCanvas(ctx, workspaceID, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
		if err != nil {
			logger.ErrorContext(ctx, "publication.created not enqueued", slog.String("publicationId", pub.PublicationID),
				slog.Any("error", err))
		}
	}
}

// generationHook returns the generation service's hook that notifies the
// subscriptions of the applications of a generation's canvas when it
// finishes (generation.completed, data: the generation).
func generationHook(n *webhook.Notifier, logger *slog.Logger) func(context.Context, *testcase.Generation) {
	return func(ctx context.Context, g *testcase.Generation) {
		err := n.NotifyCanvas(ctx, g.WorkspaceID, g.PromptID, g.ID, webhook.EventGenerationCompleted, g)
		if err != nil {
			logger.ErrorContext(ctx, "generation.completed not enqueued", slog.String("generationId", g.ID),
				slog.Any("error", err))
		}
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
