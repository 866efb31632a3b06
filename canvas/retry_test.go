package canvas_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	err := canvas.RateLimited(3*time.Second, "Too many requests.")
	assert.Equal(t, canvas.ERATELIMITED, canvas.ErrorCode(err))
	assert.Equal(t, "Too many requests.", canvas.ErrorMessage(err))
	after, ok := canvas.RetryAfter(err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, after)

	wrapped := fmt.Errorf("admit: %w", err)
	after, ok = canvas.RetryAfter(wrapped)
	assert.True(t, ok, "found through wrapping")
	assert.Equal(t, 3*time.Second, after)

	_, ok = canvas.RetryAfter(canvas.Errorf(canvas.ERATELIMITED, "no time"))
	assert.False(t, ok)
	assert.NoError(t, canvas.WithRetryAfter(nil, time.Second))
}
