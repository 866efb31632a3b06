package main

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// deliveryConfig holds the settings of webhook delivery.
type deliveryConfig struct {
	// MaxConsecutiveFailures is how many deliveries of a subscription may
	// fail for good in a row before it is disabled
	// (CANVAS_WEBHOOK_MAX_FAILURES, default 5).
	MaxConsecutiveFailures int
}

// deliveryFlags reads the delivery settings, which only the environment
// carries.
func (c *deliveryConfig) deliveryFlags(env func(string) string) error {
	c.MaxConsecutiveFailures = webhook.DefaultMaxConsecutiveFailures
	if v := env("CANVAS_WEBHOOK_MAX_FAILURES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("CANVAS_WEBHOOK_MAX_FAILURES: %q is not a positive integer", v)
		}
		c.MaxConsecutiveFailures = n
	}
	return nil
}

// webhookSender returns the sender of every delivery and Test Request,
// guarded unless CANVAS_ALLOW_PRIVATE_NETWORKS is set.
func webhookSender(cfg config) *webhook.Sender {
	return webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: cfg.AllowPrivateNetworks})
}

// deliverer returns the queue handler of delivery jobs: it logs every
// attempt in db, signs a subscription's deliveries with its live secrets,
// and disables a subscription on a 410 or after too many failures in a row.
func deliverer(cfg config, db store.Store, logger *slog.Logger) *webhook.Deliverer {
	return &webhook.Deliverer{Sender: webhookSender(cfg), Logger: logger, Log: db, Subscriptions: db,
		MaxConsecutiveFailures: cfg.MaxConsecutiveFailures}
}

// deliveryService returns the service of the delivery log, redelivery and
// Test Requests.
func deliveryService(cfg config, db store.Store) *webhook.DeliveryService {
	return webhook.NewDeliveryService(webhook.DeliveryOptions{Log: db, Applications: db, Canvases: db,
		Sender: webhookSender(cfg)})
}
