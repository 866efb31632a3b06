package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testIdempotencyOwners checks that a key in progress is held only while
// its owner's lease lasts, and that the work of a reservation records its
// id on it in the work's own transaction. A lease of zero ends at once, so
// no behaviour here waits for a clock.
func testIdempotencyOwners(t *testing.T, newStore func(t *testing.T) store.Store) {
	const hour = time.Hour
	renew := func(f *fixture, owner string, lease time.Duration) {
		f.t.Helper()
		require.NoError(f.t, f.s.RenewIdempotencyOwner(f.ctx, owner, lease))
	}
	reserve := func(f *fixture, owner, hash string) (*idempotency.Record, *idempotency.Record) {
		f.t.Helper()
		r := &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k1", RequestHash: hash}
		existing, err := f.s.ReserveIdempotencyKey(f.ctx, r,
			idempotency.Reservation{TTL: idempotency.TTL, Abandoned: idempotency.Abandoned, Owner: owner})
		require.NoError(f.t, err)
		return r, existing
	}
	asyncRun := func(f *fixture, r *idempotency.Record) *completion.Run {
		f.t.Helper()
		run := f.Run(f.Version(f.Canvas("c", nil, "alice"), "hello"))
		job := &queue.Job{WorkspaceID: run.WorkspaceID, Kind: completion.JobKindCompletion}
		require.NoError(f.t, f.s.CreateRun(idempotency.NewContext(f.ctx, r), completion.CreateRunParams{Run: run, Job: job}))
		return run
	}

	run(t, newStore, "LiveOwnerHolds", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		assert.Equal(t, "o1", r.Owner)
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, "o1", existing.Owner)
		assert.False(t, existing.Completed())
		assert.False(t, existing.Orphaned)
	})
	run(t, newStore, "LapsedOwnerReleases", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		renew(f, "o2", hour)
		reserve(f, "o1", "h1")
		renew(f, "o1", 0)
		r, existing := reserve(f, "o2", "h2")
		assert.Nil(t, existing, "the key of an owner whose lease lapsed is free")
		_, existing = reserve(f, "o3", "h3")
		require.NotNil(t, existing)
		assert.Equal(t, "h2", existing.RequestHash)
		assert.True(t, r.CreatedAt.Equal(existing.CreatedAt))
	})
	run(t, newStore, "UnknownOwnerHoldsNothing", func(t *testing.T, f *fixture) {
		reserve(f, "never-renewed", "h1")
		_, existing := reserve(f, "o2", "h2")
		assert.Nil(t, existing)
	})
	run(t, newStore, "RenewalRestoresHold", func(t *testing.T, f *fixture) {
		renew(f, "o1", 0)
		renew(f, "o1", hour)
		reserve(f, "o1", "h1")
		_, existing := reserve(f, "o2", "h2")
		require.NotNil(t, existing)
		assert.Equal(t, "h1", existing.RequestHash)
	})
	run(t, newStore, "LiveOwnerOutlastsAbandoned", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r := &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k1", RequestHash: "h1"}
		existing, err := f.s.ReserveIdempotencyKey(f.ctx, r, idempotency.Reservation{TTL: hour, Owner: "o1"})
		require.NoError(t, err)
		require.Nil(t, existing)
		time.Sleep(2 * time.Millisecond) // the record becomes older than Abandoned below
		existing, err = f.s.ReserveIdempotencyKey(f.ctx, &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k1", RequestHash: "h2"},
			idempotency.Reservation{TTL: hour, Abandoned: time.Millisecond, Owner: "o2"})
		require.NoError(t, err)
		require.NotNil(t, existing, "Abandoned applies to records without an owner only")
		assert.Equal(t, "h1", existing.RequestHash)
	})
	run(t, newStore, "CommittedWorkOrphaned", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		created := asyncRun(f, r)
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, created.ID, existing.RefID, "the run's transaction recorded it")
		assert.False(t, existing.Orphaned, "its owner lives")

		renew(f, "o1", 0)
		_, existing = reserve(f, "o2", "h1")
		require.NotNil(t, existing, "a key whose work committed is not replaced")
		assert.True(t, existing.Orphaned)
		assert.Equal(t, created.ID, existing.RefID)
		assert.False(t, existing.Completed())

		existing.Status, existing.ContentType, existing.Body = 202, "application/json", []byte(`{"id":"`+created.ID+`"}`)
		require.NoError(t, f.s.CompleteIdempotencyKey(f.ctx, existing), "the retry keeps its answer")
		_, replay := reserve(f, "o3", "h1")
		require.NotNil(t, replay)
		assert.Equal(t, 202, replay.Status)
		assert.False(t, replay.Orphaned)
	})
	run(t, newStore, "SyncRunRecordsRef", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		sync := f.Run(f.Version(f.Canvas("c", nil, "alice"), "hello"))
		sync.Async, sync.Status = false, completion.StatusCompleted
		require.NoError(t, f.s.CreateRun(idempotency.NewContext(f.ctx, r), completion.CreateRunParams{Run: sync}))
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, sync.ID, existing.RefID)
	})
	run(t, newStore, "FirstWorkWins", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		first := asyncRun(f, r)
		asyncRun(f, r)
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, first.ID, existing.RefID)
	})
	run(t, newStore, "FailedWorkRecordsNothing", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		first := asyncRun(f, r)
		other := &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k2", RequestHash: "h1"}
		existing, err := f.s.ReserveIdempotencyKey(f.ctx, other, idempotency.Reservation{TTL: hour, Owner: "o1"})
		require.NoError(t, err)
		require.Nil(t, existing)
		dup := f.Run(f.Version(f.Canvas("d", nil, "alice"), "hello"))
		dup.ID = first.ID
		requireCode(t, canvas.ECONFLICT, f.s.CreateRun(idempotency.NewContext(f.ctx, other), completion.CreateRunParams{Run: dup,
			Job: &queue.Job{WorkspaceID: f.ws.ID, Kind: completion.JobKindCompletion}}))
		renew(f, "o1", 0)
		existing, err = f.s.ReserveIdempotencyKey(f.ctx, &idempotency.Record{WorkspaceID: f.ws.ID, Key: "k2", RequestHash: "h1"},
			idempotency.Reservation{TTL: hour, Owner: "o2"})
		require.NoError(t, err)
		assert.Nil(t, existing, "work that rolled back recorded nothing: the key is free")
	})
	run(t, newStore, "WorkflowRunRecordsRef", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		wr := f.WorkflowRun(f.Version(f.Canvas("c", nil, "alice"), "hello"))
		wr.ExternalID = uuid.NewString()
		require.NoError(t, f.s.CreateWorkflowRun(idempotency.NewContext(f.ctx, r), wr, nil))
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, wr.ExternalID, existing.RefID, "the run's public id is recorded")
	})
	run(t, newStore, "ReleaseForgetsWork", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		asyncRun(f, r)
		require.NoError(t, f.s.ReleaseIdempotencyKey(f.ctx, r))
		_, existing := reserve(f, "o2", "h2")
		assert.Nil(t, existing, "a released key is free, whatever its work did")
	})
	run(t, newStore, "CompletedKeptAfterOwnerLapses", func(t *testing.T, f *fixture) {
		renew(f, "o1", hour)
		r, _ := reserve(f, "o1", "h1")
		r.Status, r.ContentType, r.Body = 200, "application/json", []byte(`{}`)
		require.NoError(t, f.s.CompleteIdempotencyKey(f.ctx, r))
		renew(f, "o1", 0)
		_, existing := reserve(f, "o2", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 200, existing.Status)
	})
}
