package main

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeliveryConfig_Flags(t *testing.T) {
	parse := func(vars map[string]string) (config, error) { return parseServe(vars) }
	t.Run("Default", func(t *testing.T) {
		c, err := parse(nil)
		require.NoError(t, err)
		assert.Equal(t, webhook.DefaultMaxConsecutiveFailures, c.MaxConsecutiveFailures)
	})
	t.Run("Set", func(t *testing.T) {
		c, err := parse(map[string]string{"CANVAS_WEBHOOK_MAX_FAILURES": "3"})
		require.NoError(t, err)
		assert.Equal(t, 3, c.MaxConsecutiveFailures)
		opts, err := engineOptions(c, nil)
		require.NoError(t, err)
		assert.Equal(t, 3, opts.Limits.MaxConsecutiveDeliveryFailures)
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, v := range []string{"0", "-1", "many"} {
			_, err := parse(map[string]string{"CANVAS_WEBHOOK_MAX_FAILURES": v})
			assert.ErrorContains(t, err, "CANVAS_WEBHOOK_MAX_FAILURES", v)
		}
	})
}
