package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDB_ReserveIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	open := func(t *testing.T) (*DB, *time.Time) {
		db := mustOpen(t, filepath.Join(t.TempDir(), "canvas.db"))
		now := start
		db.Now = func() time.Time { return now }
		return db, &now
	}
	res := idempotency.Reservation{TTL: idempotency.TTL, Abandoned: idempotency.Abandoned}
	reserve := func(t *testing.T, db *DB, hash string) (*idempotency.Record, *idempotency.Record) {
		t.Helper()
		r := &idempotency.Record{WorkspaceID: "ws", Key: "k", RequestHash: hash}
		existing, err := db.ReserveIdempotencyKey(ctx, r, res)
		require.NoError(t, err)
		return r, existing
	}
	t.Run("KeptForTTL", func(t *testing.T) {
		db, now := open(t)
		r, _ := reserve(t, db, "h1")
		r.Status, r.ContentType, r.Body = 200, "application/json", []byte(`{}`)
		require.NoError(t, db.CompleteIdempotencyKey(ctx, r))
		*now = start.Add(idempotency.TTL - time.Second)
		_, existing := reserve(t, db, "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 200, existing.Status)
		*now = start.Add(idempotency.TTL)
		_, existing = reserve(t, db, "h1")
		assert.Nil(t, existing, "a key TTL old is replaced")
	})
	t.Run("InProgressUntilAbandoned", func(t *testing.T) {
		db, now := open(t)
		reserve(t, db, "h1")
		*now = start.Add(idempotency.Abandoned - time.Second)
		_, existing := reserve(t, db, "h2")
		require.NotNil(t, existing)
		assert.Equal(t, "h1", existing.RequestHash)
		*now = start.Add(idempotency.Abandoned)
		_, existing = reserve(t, db, "h2")
		assert.Nil(t, existing, "an abandoned reservation is taken over")
	})
	t.Run("CompletedNotAbandoned", func(t *testing.T) {
		db, now := open(t)
		r, _ := reserve(t, db, "h1")
		r.Status = 201
		require.NoError(t, db.CompleteIdempotencyKey(ctx, r))
		*now = start.Add(2 * idempotency.Abandoned)
		_, existing := reserve(t, db, "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 201, existing.Status)
	})
}
