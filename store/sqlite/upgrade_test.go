package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/storetest"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// update rewrites the upgrade fixtures (go test -run TestUpgrade -update):
// only when the release they stand for is being described anew, never to
// make a failing upgrade pass.
var update = flag.Bool("update", false, "rewrite the upgrade fixtures in testdata/upgrade")

// upgradeFixture is a database as an earlier release left it: the
// migrations before stop, then what that release wrote (data).
type upgradeFixture struct {
	name, stop string
	data       []string
	// check reads what only this fixture holds, after the upgrade.
	check func(t *testing.T, db *DB)
}

// deliveryJobData is a webhook delivery and its running job, written before
// migration 016 named the delivery of each delivery job.
const deliveryJobData = `
INSERT INTO webhook_deliveries (id, workspace_id, event_type, url, status, payload, event, created_at, updated_at)
	VALUES ('d-1', 'ws-1', 'task.failed', 'https://example.com/hook', 'pending', '{"id":"d-1"}', '{}',
	'2025-07-01T10:00:00.000000000Z', '2025-07-01T10:00:00.000000000Z');
INSERT INTO jobs (id, workspace_id, kind, ref_id, payload, status, attempts, max_attempts, run_at, lease_owner,
	lease_until, created_at, updated_at)
	VALUES ('j-1', 'ws-1', 'webhook.deliver', 'ref', '{"id":"d-1","url":"https://example.com/hook"}', 'running', 1, 10,
	'2025-07-01T10:00:00.000000000Z', 'w-1', '2999-01-01T00:00:00.000000000Z', '2025-07-01T10:00:00.000000000Z',
	'2025-07-01T10:00:00.000000000Z');
`

var upgradeFixtures = []upgradeFixture{
	// The first migration set.
	{name: "001_foundation", stop: "migrations/002_jobs.sql", data: []string{storetest.FirstReleaseData}},
	// Before migration 016, which rewrote the delivery jobs.
	{name: "before-016_delivery_job", stop: "migrations/016_delivery_job.sql",
		data: []string{storetest.FirstReleaseData, deliveryJobData},
		check: func(t *testing.T, db *DB) {
			ctx := context.Background()
			require.NoError(t, db.FailJob(ctx, queue.FailJobParams{ID: "j-1", Owner: "w-1", LastError: "gone"}))
			d, err := db.GetDelivery(ctx, "ws-1", "d-1")
			require.NoError(t, err)
			assert.Equal(t, webhook.StatusFailed, d.Status, "the delivery ends with its job")
		}},
	// Before the newest migration: the release before this one.
	{name: "before-023_generation_cost", stop: "migrations/023_generation_cost.sql",
		data: []string{storetest.FirstReleaseData}},
}

// writeFixture builds f's database and writes it to path.
func writeFixture(t *testing.T, f upgradeFixture, path string) {
	ctx := context.Background()
	tmp := filepath.Join(t.TempDir(), "canvas.db")
	raw, err := sql.Open("sqlite", "file:"+tmp)
	require.NoError(t, err)
	defer raw.Close()
	old := &DB{write: raw, Now: func() time.Time { return time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC) }}
	require.NoError(t, old.migrateBefore(ctx, f.stop))
	for _, q := range f.data {
		_, err := raw.ExecContext(ctx, q)
		require.NoError(t, err)
	}
	require.NoError(t, os.Remove(path))
	_, err = raw.ExecContext(ctx, `VACUUM INTO ?`, path)
	require.NoError(t, err)
}

// TestUpgrade opens each committed fixture database, a copy of what an
// earlier release left, with today's store: it migrates and serves the old
// data as that release did.
func TestUpgrade(t *testing.T) {
	for _, f := range upgradeFixtures {
		t.Run(f.name, func(t *testing.T) {
			fixture := filepath.Join("testdata", "upgrade", f.name+".db")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(fixture), 0o755))
				require.NoError(t, os.WriteFile(fixture, nil, 0o644))
				writeFixture(t, f, fixture)
			}
			raw, err := os.ReadFile(fixture)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "canvas.db")
			require.NoError(t, os.WriteFile(path, raw, 0o600))
			db := mustOpen(t, path)
			var applied int
			require.NoError(t, db.read.QueryRow(`SELECT COUNT(*) FROM migrations`).Scan(&applied))
			embedded, err := migrationFS.ReadDir("migrations")
			require.NoError(t, err)
			assert.Equal(t, len(embedded), applied, "every migration applied")
			storetest.CheckFirstReleaseData(t, db)
			if f.check != nil {
				f.check(t, db)
			}
		})
	}
}
