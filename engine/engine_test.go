package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/engine"
)

func TestOpen_Required(t *testing.T) {
	_, err := engine.Open(context.Background(), engine.Options{})
	assert.ErrorContains(t, err, "Store is required")
}

func TestEngine_RunClose(t *testing.T) {
	ctx := context.Background()
	e, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })

	// Of two concurrent Runs, one runs and the other is refused at once.
	done := make(chan error, 2)
	go func() { done <- e.Run(ctx) }()
	go func() { done <- e.Run(ctx) }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "Run called twice")
	case <-time.After(10 * time.Second):
		t.Fatal("a second Run was not refused")
	}

	require.NoError(t, e.Close(), "Close stops Run and closes the store")
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	assert.NoError(t, e.Close(), "a second Close does nothing")
	assert.NoError(t, e.Run(ctx), "Run after Close has nothing to do")
	assert.Error(t, e.Store.Ping(ctx), "the store OpenSQLite opened is closed")
}
