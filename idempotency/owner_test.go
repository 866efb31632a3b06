package idempotency_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOwner_Hold(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	reserve := func(owner, hash string) *idempotency.Record {
		t.Helper()
		existing, err := db.ReserveIdempotencyKey(ctx, &idempotency.Record{WorkspaceID: "ws", Key: "k", RequestHash: hash},
			idempotency.Reservation{TTL: time.Hour, Owner: owner})
		require.NoError(t, err)
		return existing
	}

	t.Run("HeldKeysStayHeld", func(t *testing.T) {
		o := idempotency.NewOwner(db, time.Hour)
		assert.Equal(t, time.Hour, o.Lease())
		release, err := o.Hold(ctx)
		require.NoError(t, err)
		defer release()
		require.Nil(t, reserve(o.ID(), "h1"))
		existing := reserve("someone-else", "h2")
		require.NotNil(t, existing, "the holder's lease is live")
		assert.Equal(t, o.ID(), existing.Owner)
	})
	t.Run("NewOwnerEachTime", func(t *testing.T) {
		a, b := idempotency.NewOwner(db, 0), idempotency.NewOwner(db, 0)
		assert.NotEqual(t, a.ID(), b.ID(), "a restarted process never holds its predecessor's keys")
		assert.Equal(t, idempotency.DefaultOwnerLease, a.Lease())
	})
	t.Run("NestedHolds", func(t *testing.T) {
		o := idempotency.NewOwner(db, time.Hour)
		r1, err := o.Hold(ctx)
		require.NoError(t, err)
		r2, err := o.Hold(ctx)
		require.NoError(t, err)
		r1()
		r1() // a second call of the same release is a no-op
		r2()
		r3, err := o.Hold(ctx)
		require.NoError(t, err)
		r3()
	})
	t.Run("StoreDown", func(t *testing.T) {
		closed, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "closed.db"))
		require.NoError(t, err)
		require.NoError(t, closed.Close())
		o := idempotency.NewOwner(closed, time.Hour)
		_, err = o.Hold(ctx)
		assert.Error(t, err, "no key is held without a live lease")
	})
}
