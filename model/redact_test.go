package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// TestCaller_ErrorsHoldNoKey checks that the error of a vendor quoting the
// credential's key, as vendors refusing a key do, reaches the Caller's
// caller without the key, and still reads as the vendor's failure.
func TestCaller_ErrorsHoldNoKey(t *testing.T) {
	ctx := context.Background()
	f := newCallerFixture(t, nil)
	f.creds.add("c-claude", "claude", canvas.ProviderAnthropic)
	const key = "key-of-claude"
	f.provider("claude").fail = func(int) error {
		return model.Failure(ctx, "anthropic", 401, "authentication_error", nil,
			errors.New("401 Unauthorized: invalid x-api-key "+key))
	}
	req := model.Request{Model: "claude-sonnet-4-5", Provider: canvas.ProviderAnthropic, CredentialID: "c-claude"}
	for _, stream := range []bool{false, true} {
		var emit func(model.Chunk) error
		if stream {
			emit = func(model.Chunk) error { return nil }
		}
		_, err := f.caller.Call(ctx, "ws", req, emit)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), key)
		assert.Contains(t, err.Error(), "invalid x-api-key [redacted]", "the rest of the vendor's message is kept for the log")
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, 401, ve.Status)
		assert.False(t, ve.Retryable())
	}
}
