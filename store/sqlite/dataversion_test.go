package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustDataVersion reads db's data version.
func mustDataVersion(t *testing.T, db *DB) int64 {
	t.Helper()
	v, err := db.DataVersion(context.Background())
	require.NoError(t, err)
	return v
}

func TestDB_DataVersion(t *testing.T) {
	ctx := context.Background()

	t.Run("StableWithoutCommits", func(t *testing.T) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		ws := &canvas.Workspace{Name: "acme"}
		require.NoError(t, db.CreateWorkspace(ctx, ws))
		before := mustDataVersion(t, db)
		_, err := db.GetWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		_, err = db.ListWorkspaces(ctx)
		require.NoError(t, err)
		assert.Equal(t, before, mustDataVersion(t, db), "reads commit nothing")
	})

	t.Run("OwnWriteChangesIt", func(t *testing.T) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		before := mustDataVersion(t, db)
		require.NoError(t, db.CreateWorkspace(ctx, &canvas.Workspace{Name: "acme"}))
		after := mustDataVersion(t, db)
		assert.NotEqual(t, before, after)
		require.NoError(t, db.CreateWorkspace(ctx, &canvas.Workspace{Name: "globex"}))
		assert.NotEqual(t, after, mustDataVersion(t, db), "every commit changes it")
	})

	t.Run("GroupCommitChangesIt", func(t *testing.T) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		c, v := dataVersionCanvas(t, db)
		before := mustDataVersion(t, db)
		_, _, err := db.Publish(ctx, env.PublishParams{
			WorkspaceID: c.WorkspaceID, CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID, By: "t",
		})
		require.NoError(t, err)
		assert.NotEqual(t, before, mustDataVersion(t, db))
	})

	t.Run("OtherProcessWriteChangesIt", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "canvas.db")
		db := mustOpen(t, path)
		other := mustOpen(t, path) // stands in for another process on the file
		ws := &canvas.Workspace{Name: "acme"}
		require.NoError(t, db.CreateWorkspace(ctx, ws))
		token, key := canvas.NewAPIKey(ws.ID, canvas.RoleViewer, nil)
		require.NoError(t, db.CreateAPIKey(ctx, key))
		before := mustDataVersion(t, db)

		require.NoError(t, other.RevokeAPIKey(ctx, key.ID))
		assert.NotEqual(t, before, mustDataVersion(t, db))
		got, err := db.GetAPIKeyByHash(ctx, canvas.HashToken(token))
		require.NoError(t, err)
		assert.NotNil(t, got.RevokedAt, "the changed version comes with the change visible")
	})

	t.Run("SharedReadingsSeeEarlierCommits", func(t *testing.T) {
		// Readers hammer DataVersion, so that readings are shared, while
		// commits land from another connection (another process's view);
		// every call begun after a commit returned sees it.
		path := filepath.Join(t.TempDir(), "canvas.db")
		db := mustOpen(t, path)
		other := mustOpen(t, path)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := db.DataVersion(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for i := range 50 {
			before := mustDataVersion(t, db)
			require.NoError(t, other.CreateWorkspace(ctx, &canvas.Workspace{Name: fmt.Sprintf("ws-%d", i)}))
			assert.NotEqual(t, before, mustDataVersion(t, db), "commit %d is seen", i)
		}
		close(stop)
		wg.Wait()
	})

	t.Run("DedicatedConnectionIsReadOnly", func(t *testing.T) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		var queryOnly int
		require.NoError(t, db.dataVersion.conn.QueryRowContext(ctx, `PRAGMA query_only`).Scan(&queryOnly))
		assert.Equal(t, 1, queryOnly)
	})

	t.Run("OtherTablesLeaveIt", func(t *testing.T) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		c, _ := dataVersionCanvas(t, db)
		before := mustDataVersion(t, db)
		require.NoError(t, db.EnqueueJob(ctx, &queue.Job{WorkspaceID: c.WorkspaceID, Kind: "k"}))
		assert.Equal(t, before, mustDataVersion(t, db), "a job is nothing a cache reads")
		_, _, err := db.Publish(ctx, env.PublishParams{})
		require.Error(t, err)
		assert.Equal(t, before, mustDataVersion(t, db), "a failed write commits nothing")
	})

	t.Run("EveryTableIsClassified", func(t *testing.T) {
		// A table is either counted by the revision triggers (caches derive
		// values from it) or listed here as one no cache reads. A new table
		// must be put in one of the two, so that a cached value can never
		// miss a change to the data it came from.
		uncached := map[string]bool{
			"migrations": true, "revision": true, "jobs": true, "runs": true, "idempotency_keys": true,
			"idempotency_owners": true, "secrets": true, "files": true,
			"test_cases": true, "test_case_tags": true, "test_case_tag_assignments": true, "generations": true,
			"webhook_deliveries": true, "webhook_attempts": true,
			"applications": true, "application_secrets": true,
			"workflow_runs": true, "workflow_steps": true, "review_items": true, "run_feedback": true,
			"publication_requests": true, "publication_approvals": true, "audit_events": true,
			"experiments": true, "experiment_results": true, "evaluators": true,
		}
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		rows, err := db.read.QueryContext(ctx, `SELECT t.name,
			(SELECT COUNT(*) FROM sqlite_master g WHERE g.type = 'trigger' AND g.tbl_name = t.name AND g.name LIKE '%_revision_%')
			FROM sqlite_master t WHERE t.type = 'table' AND t.name NOT LIKE 'sqlite_%'`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var name string
			var triggers int
			require.NoError(t, rows.Scan(&name, &triggers))
			if uncached[name] {
				assert.Zero(t, triggers, "table %s is listed as uncached but has revision triggers", name)
			} else {
				assert.Equal(t, 3, triggers, "table %s needs insert, update and delete revision triggers (migration 008) or a place in the uncached list", name)
			}
		}
		require.NoError(t, rows.Err())
	})

	t.Run("UnchangedWALIndexAnswersAlone", func(t *testing.T) {
		// Without a commit, readings after the first are answered from the
		// WAL-index header, without a statement; a commit from another
		// connection sends the next reading to SQLite again.
		path := filepath.Join(t.TempDir(), "canvas.db")
		db := mustOpen(t, path)
		other := mustOpen(t, path)
		require.NotNil(t, db.dataVersion.wal, "the WAL-index is mapped")
		first := mustDataVersion(t, db)
		statements := db.dataVersion.begun.Load()
		for range 10 {
			assert.Equal(t, first, mustDataVersion(t, db))
		}
		assert.Equal(t, statements, db.dataVersion.begun.Load(), "no reading went through SQLite")

		require.NoError(t, other.CreateWorkspace(ctx, &canvas.Workspace{Name: "acme"}))
		assert.NotEqual(t, first, mustDataVersion(t, db))
		assert.Equal(t, statements+1, db.dataVersion.begun.Load(), "the commit sent one reading to SQLite")
	})

	t.Run("AfterClose", func(t *testing.T) {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
		require.NoError(t, err)
		require.NoError(t, db.Close())
		_, err = db.DataVersion(ctx)
		assert.Error(t, err)
	})
}

// dataVersionCanvas creates a workspace, a canvas and one version of it.
func dataVersionCanvas(t *testing.T, db *DB) (*canvas.Canvas, *canvas.Version) {
	t.Helper()
	ctx := context.Background()
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	c := &canvas.Canvas{Title: "c", WorkspaceID: ws.ID, InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CreatedBy: "t", UpdatedBy: "t"}
	require.NoError(t, db.CreateCanvas(ctx, c))
	v := &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, CreatedBy: "t", UpdatedBy: "t"}
	require.NoError(t, db.CreateVersion(ctx, v))
	return c, v
}

// BenchmarkDataVersion measures one DataVersion call, alone and from
// parallel goroutines sharing the dedicated connection.
func BenchmarkDataVersion(b *testing.B) {
	db, err := Open(context.Background(), filepath.Join(b.TempDir(), "canvas.db"))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("Serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.DataVersion(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := db.DataVersion(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
