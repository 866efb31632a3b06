package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
)

// recorder is a store.Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	commits []store.Commit
}

func (r *recorder) Committed(c store.Commit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits = append(r.commits, c)
}

func (r *recorder) JobTrace(context.Context) string { return "00-trace-span-01" }

type ctxKey struct{}

// Each write transaction that commits is reported with its caller's
// context; a job records the trace its Observer gives unless it has one.
func TestObserver(t *testing.T) {
	t.Parallel()
	db := mustOpen(t)
	rec := &recorder{}
	db.Observer = rec
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")

	require.NoError(t, db.CreateWorkspace(ctx, &canvas.Workspace{Name: "acme"}))
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(db.CreateWorkspace(ctx, &canvas.Workspace{Name: "acme"})))
	_, err := db.GetWorkspaceByName(ctx, "acme")
	require.NoError(t, err)
	rec.mu.Lock()
	require.Len(t, rec.commits, 1, "one commit: the failed insert rolled back, the read writes nothing")
	c := rec.commits[0]
	rec.mu.Unlock()
	assert.Equal(t, "postgresql", c.System)
	assert.Equal(t, "write", c.Name)
	require.Len(t, c.Writes, 1)
	assert.Equal(t, "caller", c.Writes[0].Value(ctxKey{}))
	assert.NoError(t, c.Err)

	traced := &queue.Job{Kind: "k"}
	require.NoError(t, db.EnqueueJob(ctx, traced))
	own := &queue.Job{Kind: "k", Trace: "00-own-01"}
	require.NoError(t, db.EnqueueJob(ctx, own))
	for id, want := range map[string]string{traced.ID: "00-trace-span-01", own.ID: "00-own-01"} {
		j, err := db.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, j.Trace)
	}
}
