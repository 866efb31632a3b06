package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testIdempotency(t *testing.T, newStore func(t *testing.T) store.Store) {
	const ttl = idempotency.TTL
	reserve := func(f *fixture, ws, key, hash string, ttl time.Duration) (*idempotency.Record, *idempotency.Record) {
		f.t.Helper()
		r := &idempotency.Record{WorkspaceID: ws, Key: key, RequestHash: hash}
		existing, err := f.s.ReserveIdempotencyKey(f.ctx, r, idempotency.Reservation{TTL: ttl, Abandoned: idempotency.Abandoned})
		require.NoError(f.t, err)
		return r, existing
	}
	complete := func(f *fixture, r *idempotency.Record, status int, contentType, body string) {
		f.t.Helper()
		r.Status, r.ContentType, r.Body = status, contentType, []byte(body)
		require.NoError(f.t, f.s.CompleteIdempotencyKey(f.ctx, r))
	}
	run(t, newStore, "ReserveNew", func(t *testing.T, f *fixture) {
		r, existing := reserve(f, f.ws.ID, "k1", "h1", ttl)
		assert.Nil(t, existing)
		assert.False(t, r.CreatedAt.IsZero())
	})
	run(t, newStore, "ReserveInProgressReturnsIt", func(t *testing.T, f *fixture) {
		first, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		_, existing := reserve(f, f.ws.ID, "k1", "h2", ttl)
		require.NotNil(t, existing)
		assert.False(t, existing.Completed())
		assert.Equal(t, "h1", existing.RequestHash, "the first request keeps the key")
		assert.True(t, first.CreatedAt.Equal(existing.CreatedAt))
		assert.Nil(t, existing.CompletedAt)
	})
	run(t, newStore, "CompleteThenReplay", func(t *testing.T, f *fixture) {
		r, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		complete(f, r, 202, "application/json", `{"id":"a"}`)
		assert.NotNil(t, r.CompletedAt)
		_, existing := reserve(f, f.ws.ID, "k1", "h1", ttl)
		require.NotNil(t, existing)
		assert.True(t, existing.Completed())
		assert.Equal(t, 202, existing.Status)
		assert.Equal(t, "application/json", existing.ContentType)
		assert.Equal(t, `{"id":"a"}`, string(existing.Body))
		assert.Equal(t, "h1", existing.RequestHash)
		assert.NotNil(t, existing.CompletedAt)
	})
	run(t, newStore, "EmptyBodyKept", func(t *testing.T, f *fixture) {
		r, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		r.Status = 204
		require.NoError(t, f.s.CompleteIdempotencyKey(f.ctx, r))
		_, existing := reserve(f, f.ws.ID, "k1", "h1", ttl)
		require.NotNil(t, existing)
		assert.Equal(t, 204, existing.Status)
		assert.Empty(t, existing.Body)
	})
	run(t, newStore, "WorkspacesIndependent", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		reserve(f, f.ws.ID, "k1", "h1", ttl)
		_, existing := reserve(f, other.ID, "k1", "h2", ttl)
		assert.Nil(t, existing)
	})
	run(t, newStore, "ReleaseInProgress", func(t *testing.T, f *fixture) {
		r, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		require.NoError(t, f.s.ReleaseIdempotencyKey(f.ctx, r))
		_, existing := reserve(f, f.ws.ID, "k1", "h2", ttl)
		assert.Nil(t, existing, "a released key is free")
	})
	run(t, newStore, "ReleaseLeavesCompleted", func(t *testing.T, f *fixture) {
		r, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		complete(f, r, 200, "application/json", `{}`)
		require.NoError(t, f.s.ReleaseIdempotencyKey(f.ctx, r))
		require.NoError(t, f.s.ReleaseIdempotencyKey(f.ctx, &idempotency.Record{WorkspaceID: f.ws.ID, Key: "unknown"}))
		_, existing := reserve(f, f.ws.ID, "k1", "h1", ttl)
		require.NotNil(t, existing)
		assert.Equal(t, 200, existing.Status)
	})
	run(t, newStore, "ExpiredReplaced", func(t *testing.T, f *fixture) {
		old, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		complete(f, old, 200, "application/json", `{}`)
		reserve(f, f.ws.ID, "k2", "h1", ttl)
		// A zero TTL makes every existing record expired.
		r, existing := reserve(f, f.ws.ID, "k1", "h2", 0)
		assert.Nil(t, existing)
		_, existing = reserve(f, f.ws.ID, "k1", "h3", ttl)
		require.NotNil(t, existing)
		assert.Equal(t, "h2", existing.RequestHash, "the new request holds the key")
		assert.False(t, existing.Completed())
		assert.True(t, r.CreatedAt.Equal(existing.CreatedAt))
		_, existing = reserve(f, f.ws.ID, "k2", "h9", ttl)
		assert.Nil(t, existing, "expired keys of the workspace were pruned")
	})
	run(t, newStore, "ReplacedReservationCannotComplete", func(t *testing.T, f *fixture) {
		old, _ := reserve(f, f.ws.ID, "k1", "h1", ttl)
		reserve(f, f.ws.ID, "k1", "h2", 0)
		old.Status = 200
		requireCode(t, canvas.ENOTFOUND, f.s.CompleteIdempotencyKey(f.ctx, old))
		require.NoError(t, f.s.ReleaseIdempotencyKey(f.ctx, old))
		_, existing := reserve(f, f.ws.ID, "k1", "h3", ttl)
		require.NotNil(t, existing, "releasing the old reservation leaves the new one")
		assert.Equal(t, "h2", existing.RequestHash)
		assert.False(t, existing.Completed())
	})
	run(t, newStore, "CompleteUnknownNotFound", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.ENOTFOUND, f.s.CompleteIdempotencyKey(f.ctx,
			&idempotency.Record{WorkspaceID: f.ws.ID, Key: "nope", Status: 200}))
	})
	run(t, newStore, "ConcurrentReserveOneWins", func(t *testing.T, f *fixture) {
		const n = 8
		var wg sync.WaitGroup
		won := make(chan bool, n)
		for range n {
			wg.Go(func() {
				r := &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k1", RequestHash: "h1"}
				existing, err := f.s.ReserveIdempotencyKey(f.ctx, r, idempotency.Reservation{TTL: ttl})
				assert.NoError(t, err)
				won <- err == nil && existing == nil
			})
		}
		wg.Wait()
		close(won)
		wins := 0
		for w := range won {
			if w {
				wins++
			}
		}
		assert.Equal(t, 1, wins)
	})
}
