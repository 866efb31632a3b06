package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/postgres"
)

// The tests of this file open several *DB (each its own pool) on one
// database, as replicas do, and check what must hold across them.

// openReplicas opens n stores on one fresh database.
func openReplicas(t *testing.T, n int) []*postgres.DB {
	t.Helper()
	dsn := pgtest.New(t)
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		db, err := postgres.Open(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// seedVersions creates a workspace, a canvas and n versions of it.
func seedVersions(t *testing.T, db *postgres.DB, n int) []*canvas.Version {
	t.Helper()
	ctx := context.Background()
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	c := &canvas.Canvas{Title: "c", WorkspaceID: ws.ID, InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2,
		CreatedBy: "alice"}
	require.NoError(t, db.CreateCanvas(ctx, c))
	vs := make([]*canvas.Version, n)
	for i := range vs {
		vs[i] = &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, CreatedBy: "alice",
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: fmt.Sprint("v", i)}}}
		require.NoError(t, db.CreateVersion(ctx, vs[i]))
	}
	return vs
}

// Publishes from several replicas at once, to production (created on
// demand by the first of them) and to a custom environment, leave one
// active publication per environment and a history whose Seqs run 1..n
// without a gap, one per publication created.
func TestReplicas_ConcurrentPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := openReplicas(t, 4)
	vs := seedVersions(t, dbs[0], 5)
	custom := &env.Environment{Name: "staging", ResourceType: env.ResourcePrompt, ResourceID: vs[0].PromptID,
		WorkspaceID: vs[0].WorkspaceID, CreatedBy: "alice"}
	require.NoError(t, dbs[0].CreateEnvironment(ctx, custom))

	const perReplica = 12
	for _, envName := range []string{env.Production, custom.Name} {
		var mu sync.Mutex
		created := 0
		var wg sync.WaitGroup
		for r, db := range dbs {
			wg.Go(func() {
				for i := range perReplica {
					v := vs[(r+i)%len(vs)]
					_, ok, err := db.Publish(ctx, env.PublishParams{WorkspaceID: v.WorkspaceID, CanvasID: v.PromptID,
						EnvName: envName, VersionID: v.ID, By: fmt.Sprint("replica", r)})
					if !assert.NoError(t, err) {
						return
					}
					if ok {
						mu.Lock()
						created++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()

		e, err := dbs[1].FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: vs[0].WorkspaceID,
			CanvasID: vs[0].PromptID, Name: envName})
		require.NoError(t, err)
		page, total, err := dbs[2].ListPublications(ctx, vs[0].WorkspaceID, e.ID, 1000, 0)
		require.NoError(t, err)
		assert.Equal(t, created, total, "%s: one history entry per publication created", envName)
		require.Len(t, page, total)
		active := 0
		for i, p := range page {
			assert.Equal(t, int64(total-i), p.Seq, "%s: Seqs run down from %d without a gap", envName, total)
			if p.IsActive {
				active++
				assert.Equal(t, *e.ActiveVersionID, p.VersionID)
			} else {
				assert.NotNil(t, p.UnpublishedAt)
			}
			if i > 0 {
				assert.NotEqual(t, page[i-1].VersionID, p.VersionID, "a publish of the active version creates nothing")
			}
		}
		assert.Equal(t, 1, active, "%s: one active publication", envName)
		assert.True(t, page[0].IsActive, "%s: the newest is the active one", envName)
		// A deep page reads its Seq range.
		deep, _, err := dbs[3].ListPublications(ctx, vs[0].WorkspaceID, e.ID, 2, total-2)
		require.NoError(t, err)
		assert.Equal(t, []int64{2, 1}, []int64{deep[0].Seq, deep[1].Seq})
	}
}

// A change committed through one replica moves the data version every
// other replica reads at once; a write no cache derives from (a job)
// leaves it alone.
func TestReplicas_DataVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	before, err := b.DataVersion(ctx)
	require.NoError(t, err)
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, a.CreateWorkspace(ctx, ws))
	after, err := b.DataVersion(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, before, after, "a workspace created through a changes b's version")

	key := &canvas.APIKey{WorkspaceID: ws.ID, Role: canvas.RoleAdmin, Hash: "h1"}
	require.NoError(t, a.CreateAPIKey(ctx, key))
	created, err := b.DataVersion(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, after, created)
	require.NoError(t, a.RevokeAPIKey(ctx, key.ID))
	revoked, err := b.DataVersion(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, created, revoked, "a key revoked through a changes b's version")

	require.NoError(t, a.EnqueueJob(ctx, &queue.Job{Kind: "k"}))
	same, err := b.DataVersion(ctx)
	require.NoError(t, err)
	assert.Equal(t, revoked, same, "a job is not data a cache derives from")
}

// A job enqueued through one replica wakes the workers subscribed on
// another (LISTEN/NOTIFY); a job due later does not.
func TestReplicas_WakeOnEnqueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	woken := make(chan struct{}, 16)
	stop := b.WakeOnEnqueue(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer stop()
	// The listener wakes everyone once it listens (commits may have gone
	// unseen before); from then on, wake-ups are notifications.
	select {
	case <-woken:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener never started")
	}
	require.NoError(t, a.EnqueueJob(ctx, &queue.Job{Kind: "k", RunAt: time.Now().Add(time.Hour)}))
	require.NoError(t, a.EnqueueJob(ctx, &queue.Job{Kind: "k"}))
	select {
	case <-woken:
	case <-time.After(30 * time.Second):
		t.Fatal("a job enqueued on another replica did not wake the subscriber")
	}
	select {
	case <-woken:
		t.Fatal("one wake-up per due commit: the scheduled job woke no one")
	default:
	}
}

// Replicas claiming at once take each job exactly once; a job whose
// holder died (its lease expired) is claimed by another replica, with its
// attempt counted, and the dead holder can no longer complete it.
func TestReplicas_Claims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	const jobs = 60
	for range jobs {
		require.NoError(t, dbs[0].EnqueueJob(ctx, &queue.Job{Kind: "k"}))
	}
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for r, db := range dbs {
		wg.Go(func() {
			owner := fmt.Sprint("replica", r)
			for {
				got, err := db.ClaimJobs(ctx, owner, []string{"k"}, 4, time.Minute)
				if !assert.NoError(t, err) || len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					assert.Empty(t, claimed[j.ID], "job %s claimed twice", j.ID)
					claimed[j.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, claimed, jobs, "every job claimed once")

	// A replica dies holding a job: once the lease expires, another takes
	// it over.
	j := &queue.Job{Kind: "x"}
	require.NoError(t, dbs[0].EnqueueJob(ctx, j))
	got, err := dbs[0].ClaimJobs(ctx, "dead", []string{"x"}, 1, time.Second)
	require.NoError(t, err)
	require.Len(t, got, 1)
	none, err := dbs[1].ClaimJobs(ctx, "alive", []string{"x"}, 1, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, none, "a held lease is not claimable")
	later := dbs[1]
	later.Now = func() time.Time { return time.Now().Add(2 * time.Second) }
	got, err = later.ClaimJobs(ctx, "alive", []string{"x"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, j.ID, got[0].ID)
	assert.Equal(t, 2, got[0].Attempts)
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(dbs[0].CompleteJob(ctx, j.ID, "dead")),
		"the dead holder's lease is lost")
	require.NoError(t, later.CompleteJob(ctx, j.ID, "alive"))
}

// A listener whose connection is cut reconnects, wakes its subscribers
// (commits may have gone unseen meanwhile), and is woken by enqueues again.
func TestReplicas_WakeAfterReconnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := openReplicas(t, 2)
	a, b := dbs[0], dbs[1]
	woken := make(chan struct{}, 16)
	stop := b.WakeOnEnqueue(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer stop()
	wait := func(what string) {
		t.Helper()
		select {
		case <-woken:
		case <-time.After(30 * time.Second):
			t.Fatal(what)
		}
	}
	wait("the listener never started")

	var killed int
	require.NoError(t, a.Pool().QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN canvas_jobs'`).Scan(&killed))
	require.Equal(t, 1, killed, "one listening connection per subscribed store")
	wait("no wake-up after the listener reconnected")
	require.NoError(t, a.EnqueueJob(ctx, &queue.Job{Kind: "k"}))
	wait("an enqueue after the reconnection woke no one")
}

// Changes of one workspace made by several replicas at once, publishes
// among them, keep one audit chain: its seqs run 1..n without a gap or a
// repeat, each event chained to the one before, and every change has its
// event.
func TestReplicas_AuditChain(t *testing.T) {
	t.Parallel()
	dbs := openReplicas(t, 3)
	ctx := context.Background()
	vs := seedVersions(t, dbs[0], 6)
	wsID := vs[0].WorkspaceID
	const each = 6
	var wg sync.WaitGroup
	errs := make(chan error, len(dbs)*each*2)
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				c := &canvas.Canvas{Title: fmt.Sprint("r", i, "-", j), WorkspaceID: wsID, InferencesPercentage: "0",
					LayoutVersion: canvas.LayoutV2, CreatedBy: "alice"}
				errs <- db.CreateCanvas(ctx, c)
				_, _, err := db.Publish(ctx, env.PublishParams{WorkspaceID: wsID, CanvasID: vs[0].PromptID,
					EnvName: env.Production, VersionID: vs[(i+j)%len(vs)].ID, By: "alice"})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var v audit.Verifier
	require.NoError(t, audit.Walk(ctx, dbs[1], wsID, 50, func(e *audit.Event) error { v.Add(e); return nil }))
	assert.Empty(t, v.Breaks)
	// The seed's canvas and versions, then each replica's canvases and
	// publishes.
	assert.Equal(t, 1+len(vs)+len(dbs)*each*2, v.Events)
	assert.Equal(t, 1, v.Workspaces)
}
