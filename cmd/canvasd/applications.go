package main

import (
	"fmt"
	"time"

	"github.com/promptcanvas/promptcanvas/webhook"
)

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
