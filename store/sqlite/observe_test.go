package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type traceKey struct{}

// recordingObserver keeps what it is told, and reads job traces from a
// context value.
type recordingObserver struct {
	mu      sync.Mutex
	commits []sqlite.Commit
}

func (o *recordingObserver) Committed(c sqlite.Commit) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits = append(o.commits, c)
}

func (o *recordingObserver) JobTrace(ctx context.Context) string {
	s, _ := ctx.Value(traceKey{}).(string)
	return s
}

func (o *recordingObserver) names() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := map[string]int{}
	for _, c := range o.commits {
		m[c.Name] += len(c.Writes)
	}
	return m
}

func TestDB_Observer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	o := &recordingObserver{}
	db.Observer = o

	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	j := &queue.Job{WorkspaceID: ws.ID, Kind: "a.run", RefID: "r1"}
	require.NoError(t, db.EnqueueJob(context.WithValue(ctx, traceKey{}, tp), j))
	assert.Equal(t, tp, j.Trace)
	got, err := db.GetJob(ctx, j.ID)
	require.NoError(t, err)
	assert.Equal(t, tp, got.Trace, "the trace is stored with the job")

	own := &queue.Job{WorkspaceID: ws.ID, Kind: "a.run", RefID: "r2", Trace: "00-11111111111111111111111111111111-2222222222222222-01"}
	require.NoError(t, db.EnqueueJob(context.WithValue(ctx, traceKey{}, tp), own))
	assert.NotEqual(t, tp, own.Trace, "a job's own trace wins")

	claimed, err := db.ClaimJobs(ctx, "w1", []string{"a.run"}, 1, 0)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	require.NoError(t, db.CompleteJob(ctx, claimed[0].ID, "w1")) // a group commit, as the claim's

	names := o.names()
	assert.GreaterOrEqual(t, names["write"], 3, "workspace, two enqueues: %v", names)
	assert.Equal(t, 2, names["jobs"], "the claim's and the job outcome's shared commits: %v", names)
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.commits {
		assert.NoError(t, c.Err)
		assert.False(t, c.Start.IsZero())
		assert.NotEmpty(t, c.Writes)
	}
}
