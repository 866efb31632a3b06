package postgres

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/store/storetest"
)

// update rewrites the upgrade fixtures (go test -run TestUpgrade -update),
// which needs pg_dump: only when the release they stand for is being
// described anew, never to make a failing upgrade pass.
var update = flag.Bool("update", false, "rewrite the upgrade fixtures in testdata/upgrade")

// upgradeFixtures are databases as earlier releases left them, by the
// migration each stopped before: the first migration set, and the release
// before the newest migration. No Postgres migration so far rewrote data.
var upgradeFixtures = []struct{ name, stop string }{
	{"001_schema", "migrations/002_lists.sql"},
	{"before-005_generation_cost", "migrations/005_generation_cost.sql"},
}

// dumpFixture builds a database migrated before stop, holding the first
// release's data, and writes pg_dump's SQL of it to path, without psql's
// meta-commands.
func dumpFixture(t *testing.T, stop, path string) {
	ctx := context.Background()
	dsn := pgtest.New(t)
	db, err := openBefore(ctx, dsn, stop)
	require.NoError(t, err)
	_, err = db.pool.Exec(ctx, storetest.FirstReleaseData, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	db.Close()
	out, err := exec.CommandContext(ctx, "pg_dump", "--no-owner", "--no-privileges", "--inserts", "--dbname", dsn).Output()
	require.NoError(t, err)
	var lines []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if !strings.HasPrefix(line, `\`) {
			lines = append(lines, line)
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
}

// TestUpgrade loads each committed dump, a database as an earlier release
// left it, into a new database and opens it with today's store: it
// migrates and serves the old data as that release did.
func TestUpgrade(t *testing.T) {
	for _, f := range upgradeFixtures {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			fixture := filepath.Join("testdata", "upgrade", f.name+".sql")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(fixture), 0o755))
				dumpFixture(t, f.stop, fixture)
			}
			dump, err := os.ReadFile(fixture)
			require.NoError(t, err)
			dsn := pgtest.New(t)
			conn, err := pgx.Connect(ctx, dsn)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, string(dump), pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			require.NoError(t, conn.Close(ctx))

			db, err := Open(ctx, dsn)
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			var applied int
			require.NoError(t, db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied))
			embedded, err := migrationFS.ReadDir("migrations")
			require.NoError(t, err)
			assert.Equal(t, len(embedded), applied, "every migration applied")
			storetest.CheckFirstReleaseData(t, db)
		})
	}
}
