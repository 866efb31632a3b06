package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
	"github.com/promptcanvas/promptcanvas/store/storetest"
)

// Processes starting at once on a new database apply each migration once:
// the advisory lock makes the others wait, then find it recorded.
func TestMigrate_Concurrent(t *testing.T) {
	dsn := pgtest.New(t)
	ctx := context.Background()
	const n = 4
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = Open(ctx, dsn) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { dbs[i].Close() })
	}
	var applied, names int
	require.NoError(t, dbs[0].pool.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT name) FROM schema_migrations`).
		Scan(&applied, &names))
	embedded, err := migrationFS.ReadDir("migrations")
	require.NoError(t, err)
	assert.Equal(t, len(embedded), applied, "each migration recorded once")
	assert.Equal(t, applied, names)

	// Opening again applies nothing.
	again, err := Open(ctx, dsn)
	require.NoError(t, err)
	defer again.Close()
	require.NoError(t, again.pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied))
	assert.Equal(t, len(embedded), applied)
}

// A database that a newer release migrated is refused at Open, with a
// message naming the migration, and left as it was.
func TestMigrate_NewerDatabase(t *testing.T) {
	dsn := pgtest.New(t)
	ctx := context.Background()
	db, err := Open(ctx, dsn)
	require.NoError(t, err)
	_, err = db.pool.Exec(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ('999_future.sql', now())`)
	require.NoError(t, err)
	db.Close()

	_, err = Open(ctx, dsn)
	require.ErrorIs(t, err, sqlstore.ErrNewerDatabase)
	assert.Contains(t, err.Error(), "999_future.sql")

	again, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer again.Close(ctx)
	var n int
	require.NoError(t, again.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n))
	embedded, err := migrationFS.ReadDir("migrations")
	require.NoError(t, err)
	assert.Equal(t, len(embedded)+1, n, "nothing was applied or removed")
}

// TestMigration015_EvaluatorSecrets shows that the rows holding a webhook
// secret in clear before migration 015 are the ones a key rotation
// re-seals afterwards (storetest.CheckClearSecretsFound).
func TestMigration015_EvaluatorSecrets(t *testing.T) {
	dsn := pgtest.New(t)
	ctx := context.Background()
	old, err := openBefore(ctx, dsn, "migrations/015_evaluator_secrets.sql")
	require.NoError(t, err)
	_, err = old.pool.Exec(ctx, storetest.ClearSecretsData, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	old.Close()

	db, err := Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()
	storetest.CheckClearSecretsFound(t, db)
}
