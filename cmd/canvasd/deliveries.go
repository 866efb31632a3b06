package main

import (
	"fmt"
	"strconv"

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
