package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustOpen opens the database at path and closes it when the test ends.
func mustOpen(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpen_Pragmas(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	ctx := context.Background()
	for name, pool := range map[string]*sql.DB{"writer": db.write, "reader": db.read} {
		var mode string
		var synchronous, foreignKeys, busy, queryOnly int
		require.NoError(t, pool.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
		require.NoError(t, pool.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&synchronous))
		require.NoError(t, pool.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&foreignKeys))
		require.NoError(t, pool.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy))
		require.NoError(t, pool.QueryRowContext(ctx, `PRAGMA query_only`).Scan(&queryOnly))
		assert.Equal(t, "wal", mode, name)
		assert.Equal(t, 2, synchronous, "%s: synchronous=FULL", name)
		assert.Equal(t, 1, foreignKeys, name)
		assert.Equal(t, 10000, busy, name)
		assert.Equal(t, name == "reader", queryOnly == 1, "%s: only readers are query-only", name)
	}
}

func TestOpen_MigrationsRecordedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	applied := func(db *DB) map[string]string {
		rows, err := db.read.QueryContext(ctx, `SELECT name, applied_at FROM migrations`)
		got, err := sqlstore.RowsOf(sqlRows{rows}, err, func(r sqlstore.Rows) ([2]string, error) {
			var row [2]string
			return row, r.Scan(&row[0], &row[1])
		})
		require.NoError(t, err)
		m := map[string]string{}
		for _, row := range got {
			m[row[0]] = row[1]
		}
		return m
	}
	db, err := Open(ctx, path)
	require.NoError(t, err)
	first := applied(db)
	assert.Contains(t, first, "migrations/001_foundation.sql")
	require.NoError(t, db.migrate(ctx), "migrating again is a no-op")
	assert.Equal(t, first, applied(db))
	require.NoError(t, db.Close())

	db = mustOpen(t, path)
	assert.Equal(t, first, applied(db), "reopening applies nothing twice")
}

func TestDB_Reopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db, err := Open(ctx, path)
	require.NoError(t, err)
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	c := &canvas.Canvas{Title: "kept", WorkspaceID: ws.ID, CreatedBy: "alice"}
	require.NoError(t, db.CreateCanvas(ctx, c))
	v := &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, Title: "v", CreatedBy: "alice",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "hello"}}}
	require.NoError(t, db.CreateVersion(ctx, v))
	pub, _, err := db.Publish(ctx, env.PublishParams{WorkspaceID: ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID, By: "alice"})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, db.Close(), "closing twice is harmless")

	db = mustOpen(t, path)
	got, err := db.GetVersion(ctx, ws.ID, v.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Content)
	assert.Equal(t, "hello", *got.Content)
	assert.True(t, got.Promoted)
	page, total, err := db.ListPublications(ctx, ws.ID, pub.EnvironmentID, 20, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	require.Len(t, page, 1)
	assert.Equal(t, pub.PublicationID, page[0].PublicationID)
}

func TestDB_PublishAfterClose(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, _, err = db.Publish(context.Background(), env.PublishParams{})
	assert.ErrorIs(t, err, errClosed)
}

func TestDB_PublishBatch(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	c := &canvas.Canvas{Title: "c", WorkspaceID: ws.ID, CreatedBy: "alice"}
	require.NoError(t, db.CreateCanvas(ctx, c))
	var versions [2]*canvas.Version
	for i := range versions {
		versions[i] = &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, Title: "v", CreatedBy: "alice"}
		require.NoError(t, db.CreateVersion(ctx, versions[i]))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	params := func(versionID, envName string) env.PublishParams {
		return env.PublishParams{WorkspaceID: ws.ID, CanvasID: c.ID, EnvName: envName, VersionID: versionID, By: "bob"}
	}
	type result struct {
		pub     *env.Publication
		created bool
		err     error
	}
	reqs := []struct {
		ctx context.Context
		p   env.PublishParams
	}{
		{ctx, params(versions[0].ID, env.Production)},
		{ctx, params("4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10", env.Production)},
		{ctx, params(versions[1].ID, "staging")},
		{cancelled, params(versions[0].ID, env.Production)},
		{ctx, params(versions[1].ID, env.Production)},
	}
	results := make([]result, len(reqs))
	// The committer is held as if a leader were at work, so that the
	// publishes wait, in order, for the one batch run below.
	commits := &db.publishCommits
	pending := func() int {
		commits.mu.Lock()
		defer commits.mu.Unlock()
		return len(commits.pending)
	}
	commits.mu.Lock()
	commits.leading = true
	commits.mu.Unlock()
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() { results[i].pub, results[i].created, results[i].err = db.Publish(r.ctx, r.p) })
		require.Eventually(t, func() bool { return pending() == i+1 }, 5*time.Second, time.Millisecond)
	}
	db.commitBatches(commits)
	wg.Wait()
	require.NoError(t, results[0].err)
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(results[1].err), "a missing version fails alone")
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(results[2].err), "a missing environment fails alone")
	assert.ErrorIs(t, results[3].err, context.Canceled)
	require.NoError(t, results[4].err)
	assert.True(t, results[4].created)
	assert.Equal(t, int64(2), results[4].pub.Seq)

	page, total, err := db.ListPublications(ctx, ws.ID, results[0].pub.EnvironmentID, 20, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, total, "the batch's good publishes were committed together")
	require.Len(t, page, 2)
	assert.Equal(t, versions[1].ID, page[0].VersionID)
	assert.True(t, page[0].IsActive)
	assert.False(t, page[1].IsActive)
	require.NotNil(t, page[1].UnpublishedAt)
	assert.True(t, page[1].UnpublishedAt.Equal(page[0].PublishedAt))
}

func TestTranslate_ForeignKeyNotFound(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
	err := db.CreateProject(context.Background(), &canvas.Project{Name: "p", WorkspaceID: "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10"})
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "a project needs its workspace: %v", err)
}
