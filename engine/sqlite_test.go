package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

func TestOpenSQLite_HoldsTheDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { first.Close() })

	_, err = engine.OpenSQLite(ctx, dir, engine.Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, engine.ErrDataDirHeld), "%v", err)
	assert.ErrorContains(t, err, dir)

	beside, err := engine.OpenSQLiteBeside(ctx, dir, engine.Options{})
	require.NoError(t, err, "a tool opens the directory beside its server")
	_, _, err = beside.Bootstrap(ctx, "")
	require.NoError(t, err)
	require.NoError(t, beside.Close())

	require.NoError(t, first.Close())
	again, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err, "Close gives the directory up")
	require.NoError(t, again.Close())
}

// deadKeys has an engine that stands for a process killed while it held two
// Idempotency-Keys, its lease still live: "no-work", whose request
// committed nothing, and "task", whose request committed a task run. It
// returns that run, with the engine closed as the process's death left it.
func deadKeys(t *testing.T, ctx context.Context, dir string) *completion.Run {
	t.Helper()
	e, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer e.Close()
	_, _, err = e.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	// The hold ends without a release of the keys, as a killed process's
	// does: its lease is still live.
	release, err := e.Idempotency.Hold(ctx)
	require.NoError(t, err)
	defer release()
	recs := map[string]*idempotency.Record{}
	for _, key := range []string{"no-work", "task"} {
		recs[key] = &idempotency.Record{WorkspaceID: ws.ID, Key: key, RequestHash: key}
		existing, err := e.Idempotency.Reserve(ctx, recs[key])
		require.NoError(t, err)
		require.Nil(t, existing)
	}
	p := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	run, err := e.Completions.RunTask(idempotency.NewContext(p, recs["task"]), completion.TaskParams{Prompt: "Hello"})
	require.NoError(t, err)
	return run
}

func TestOpenSQLite_ReleasesEarlierKeys(t *testing.T) {
	ctx := context.Background()
	reserve := func(t *testing.T, e *engine.Engine, key, hash string) *idempotency.Record {
		t.Helper()
		ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
		require.NoError(t, err)
		release, err := e.Idempotency.Hold(ctx)
		require.NoError(t, err)
		defer release()
		existing, err := e.Idempotency.Reserve(ctx, &idempotency.Record{WorkspaceID: ws.ID, Key: key, RequestHash: hash})
		require.NoError(t, err)
		return existing
	}

	t.Run("AtStart", func(t *testing.T) {
		dir := t.TempDir()
		run := deadKeys(t, ctx, dir)
		e, err := engine.OpenSQLite(ctx, dir, engine.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { e.Close() })
		assert.Nil(t, reserve(t, e, "no-work", "no-work"), "a key whose work never committed is free at once")
		task := reserve(t, e, "task", "task")
		require.NotNil(t, task, "a key whose work committed is kept")
		assert.True(t, task.Orphaned, "its retry answers from the work")
		assert.Equal(t, run.ID, task.RefID)
	})
	t.Run("NotBeside", func(t *testing.T) {
		dir := t.TempDir()
		deadKeys(t, ctx, dir)
		e, err := engine.OpenSQLiteBeside(ctx, dir, engine.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { e.Close() })
		held := reserve(t, e, "no-work", "no-work")
		require.NotNil(t, held, "beside a server that may live, a key waits for its holder's lease")
		assert.False(t, held.Completed())
		assert.False(t, held.HeldUntil.IsZero())
	})
}
