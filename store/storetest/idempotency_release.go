package storetest

import (
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testIdempotencyRelease checks ReleaseIdempotencyOwners, the release of
// the keys of processes known to be dead, and the HeldUntil of a record
// still held: a released key whose work committed answers from that work,
// any other released key is free, and what a live process or a completed
// answer holds is kept.
func testIdempotencyRelease(t *testing.T, newStore func(t *testing.T) store.Store) {
	const hour = time.Hour
	renew := func(f *fixture, owner string) {
		f.t.Helper()
		require.NoError(f.t, f.s.RenewIdempotencyOwner(f.ctx, owner, hour))
	}
	reserve := func(f *fixture, key, owner, hash string) (*idempotency.Record, *idempotency.Record) {
		f.t.Helper()
		r := &idempotency.Record{WorkspaceID: f.ws.ID, Key: key, RequestHash: hash}
		existing, err := f.s.ReserveIdempotencyKey(f.ctx, r,
			idempotency.Reservation{TTL: idempotency.TTL, Abandoned: idempotency.Abandoned, Owner: owner})
		require.NoError(f.t, err)
		return r, existing
	}
	release := func(f *fixture, except string) {
		f.t.Helper()
		require.NoError(f.t, f.s.ReleaseIdempotencyOwners(f.ctx, except))
	}

	run(t, newStore, "CommittedWorkAnswers", func(t *testing.T, f *fixture) {
		renew(f, "dead")
		r, _ := reserve(f, "k1", "dead", "h1")
		created := f.Run(f.Version(f.Canvas("c", nil, "alice"), "hello"))
		require.NoError(t, f.s.CreateRun(idempotency.NewContext(f.ctx, r), completion.CreateRunParams{Run: created,
			Job: &queue.Job{WorkspaceID: f.ws.ID, Kind: completion.JobKindCompletion}}))
		release(f, "new")
		_, existing := reserve(f, "k1", "new", "h1")
		require.NotNil(t, existing, "a key whose work committed is not freed")
		assert.True(t, existing.Orphaned, "its holder's lease ended at the release")
		assert.Equal(t, created.ID, existing.RefID)
		assert.True(t, existing.HeldUntil.IsZero(), "nothing holds it")
	})
	run(t, newStore, "NoWorkFreed", func(t *testing.T, f *fixture) {
		renew(f, "dead")
		reserve(f, "k1", "dead", "h1")
		release(f, "new")
		r, existing := reserve(f, "k1", "new", "h2")
		assert.Nil(t, existing, "the key is free at once: its retry runs anew")
		assert.Equal(t, "new", r.Owner)
	})
	run(t, newStore, "ExceptKeepsItsKeys", func(t *testing.T, f *fixture) {
		renew(f, "self")
		reserve(f, "k1", "self", "h1")
		release(f, "self")
		_, existing := reserve(f, "k1", "other", "h2")
		require.NotNil(t, existing)
		assert.Equal(t, "self", existing.Owner)
		assert.False(t, existing.Orphaned)
		r, again := reserve(f, "k2", "self", "h1")
		assert.Nil(t, again, "the kept owner still reserves")
		assert.Equal(t, "self", r.Owner)
	})
	run(t, newStore, "CompletedKept", func(t *testing.T, f *fixture) {
		renew(f, "dead")
		r, _ := reserve(f, "k1", "dead", "h1")
		r.Status, r.ContentType, r.Body = 202, "application/json", []byte(`{"id":"x"}`)
		require.NoError(t, f.s.CompleteIdempotencyKey(f.ctx, r))
		release(f, "new")
		_, existing := reserve(f, "k1", "new", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 202, existing.Status)
		assert.JSONEq(t, `{"id":"x"}`, string(existing.Body))
	})
	run(t, newStore, "OwnerlessKept", func(t *testing.T, f *fixture) {
		r, _ := reserve(f, "k1", "", "h1")
		release(f, "new")
		_, existing := reserve(f, "k1", "new", "h2")
		require.NotNil(t, existing, "a record without an owner follows Abandoned")
		assert.True(t, existing.HeldUntil.Equal(r.CreatedAt.Add(idempotency.Abandoned)),
			"held until %s, created %s", existing.HeldUntil, r.CreatedAt)
	})
	run(t, newStore, "HeldUntilIsTheLease", func(t *testing.T, f *fixture) {
		before := time.Now()
		renew(f, "live")
		reserve(f, "k1", "live", "h1")
		_, existing := reserve(f, "k1", "other", "h2")
		require.NotNil(t, existing)
		assert.False(t, existing.HeldUntil.Before(before.Add(hour).Truncate(time.Microsecond)),
			"held until %s", existing.HeldUntil)
		assert.False(t, existing.HeldUntil.After(time.Now().Add(hour)), "held until %s", existing.HeldUntil)
	})
}
