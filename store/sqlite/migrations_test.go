package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
	"github.com/promptcanvas/promptcanvas/store/storetest"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigration016_DeliveryID shows that the delivery jobs a database held
// before migration 016 name their deliveries afterwards, so that their log
// rows still end with them, and that no other job does.
func TestMigration016_DeliveryID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	old := &DB{write: raw, Now: func() time.Time { return time.Now().UTC() }}
	require.NoError(t, old.migrateBefore(ctx, "migrations/016_delivery_job.sql"))
	now := formatTime(time.Now().UTC())
	lease := formatTime(time.Now().Add(time.Hour).UTC())
	_, err = raw.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, event_type, url, status,
		payload, event, created_at, updated_at) VALUES ('d1', 'ws', 'task.failed', 'https://example.com/hook',
		'pending', '{"id":"d1"}', '{}', ?1, ?1)`, now)
	require.NoError(t, err)
	for _, j := range []struct{ id, kind, payload, status string }{
		{"delivery", "webhook.deliver", `{"id":"d1","url":"https://example.com/hook"}`, "running"},
		{"other", "completion.run", `{"id":"d1"}`, "queued"},
		{"unreadable", "webhook.deliver", `not json`, "queued"},
	} {
		_, err = raw.ExecContext(ctx, `INSERT INTO jobs (id, workspace_id, kind, ref_id, payload, status, attempts,
			max_attempts, run_at, lease_owner, lease_until, created_at, updated_at)
			VALUES (?, 'ws', ?, 'ref', ?, ?, 1, 10, ?, 'w1', ?, ?, ?)`, j.id, j.kind, j.payload, j.status, now, lease, now, now)
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	db := mustOpen(t, path)
	deliveryOf := func(jobID string) *string {
		t.Helper()
		var id sql.NullString
		require.NoError(t, db.read.QueryRowContext(ctx, `SELECT delivery_id FROM jobs WHERE id = ?`, jobID).Scan(&id))
		if !id.Valid {
			return nil
		}
		return &id.String
	}
	require.NotNil(t, deliveryOf("delivery"))
	assert.Equal(t, "d1", *deliveryOf("delivery"))
	assert.Nil(t, deliveryOf("other"), "only delivery jobs serve a delivery")
	assert.Nil(t, deliveryOf("unreadable"), "a payload that is not JSON names nothing")

	require.NoError(t, db.FailJob(ctx, queue.FailJobParams{ID: "delivery", Owner: "w1", LastError: "handler panicked"}))
	d, err := db.GetDelivery(ctx, "ws", "d1")
	require.NoError(t, err)
	assert.Equal(t, webhook.StatusFailed, d.Status, "the row still ends with its job")
	require.NotNil(t, d.LastError)
	assert.Equal(t, "handler panicked", *d.LastError)
}

// A database that a newer release migrated is refused at Open, with a
// message naming the migration, and left as it was.
func TestOpen_NewerDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db := mustOpen(t, path)
	_, err := db.write.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES ('migrations/999_future.sql', '2030-01-01T00:00:00Z')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = Open(ctx, path)
	require.ErrorIs(t, err, sqlstore.ErrNewerDatabase)
	assert.Contains(t, err.Error(), "999_future.sql")
	assert.Contains(t, err.Error(), "run a canvasd at least as new")

	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var n int
	require.NoError(t, raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = 'migrations/999_future.sql'`).Scan(&n))
	assert.Equal(t, 1, n, "the record stays")
}

// TestMigration033_EvaluatorSecrets shows that the rows holding a webhook
// secret in clear before migration 033 are the ones a key rotation
// re-seals afterwards (storetest.CheckClearSecretsFound).
func TestMigration033_EvaluatorSecrets(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	old := &DB{write: raw, Now: func() time.Time { return time.Now().UTC() }}
	require.NoError(t, old.migrateBefore(ctx, "migrations/033_evaluator_secrets.sql"))
	_, err = raw.ExecContext(ctx, storetest.ClearSecretsData)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	storetest.CheckClearSecretsFound(t, mustOpen(t, path))
}
