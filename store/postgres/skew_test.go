package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/store/storetest"
)

// TestRollingUpgrade_OlderAndNewerReplica: during a rolling upgrade an
// older replica keeps serving while a newer one migrates the database it
// shares, and each sees what the other writes. The older replica is
// modelled as today's store opened with the newest migration withheld: it
// runs on the schema the previous release left, and what it does here
// (versions, publishing, reading what is served) touches no table the
// withheld migration changes. A real older binary also runs its own code,
// which this does not model; the README's Deploying section states the
// rule migrations follow so that such code keeps working.
func TestRollingUpgrade_OlderAndNewerReplica(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	older, err := openBefore(ctx, dsn, "migrations/005_generation_cost.sql")
	require.NoError(t, err)
	t.Cleanup(func() { older.Close() })
	_, err = older.pool.Exec(ctx, storetest.FirstReleaseData, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)

	newer, err := Open(ctx, dsn)
	require.NoError(t, err, "the newer replica migrates while the older one serves")
	t.Cleanup(func() { newer.Close() })
	var applied int
	require.NoError(t, newer.pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied))
	embedded, err := migrationFS.ReadDir("migrations")
	require.NoError(t, err)
	require.Equal(t, len(embedded), applied)

	// The older replica publishes a new version; the newer one serves it.
	v := &canvas.Version{PromptID: "c-1", WorkspaceID: "ws-1", Title: "From the older", CreatedBy: "u-1",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "older"}}}
	require.NoError(t, older.CreateVersion(ctx, v))
	_, _, err = older.Publish(ctx, env.PublishParams{WorkspaceID: "ws-1", CanvasID: "c-1", EnvName: "production",
		VersionID: v.ID, By: "u-1"})
	require.NoError(t, err)
	prod, err := newer.FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: "ws-1", CanvasID: "c-1", Name: "production"})
	require.NoError(t, err)
	require.NotNil(t, prod.ActiveVersionID)
	assert.Equal(t, v.ID, *prod.ActiveVersionID)

	// And the other way round.
	w := &canvas.Version{PromptID: "c-1", WorkspaceID: "ws-1", Title: "From the newer", CreatedBy: "u-2",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "newer"}}}
	require.NoError(t, newer.CreateVersion(ctx, w))
	assert.Equal(t, v.VersionIndex+1, w.VersionIndex, "both number versions in one sequence")
	_, _, err = newer.Publish(ctx, env.PublishParams{WorkspaceID: "ws-1", CanvasID: "c-1", EnvName: "production",
		VersionID: w.ID, By: "u-2"})
	require.NoError(t, err)
	prod, err = older.FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: "ws-1", CanvasID: "c-1", Name: "production"})
	require.NoError(t, err)
	require.NotNil(t, prod.ActiveVersionID)
	assert.Equal(t, w.ID, *prod.ActiveVersionID)
	got, err := older.GetVersion(ctx, "ws-1", w.ID)
	require.NoError(t, err)
	assert.Equal(t, "From the newer", got.Title)
}
