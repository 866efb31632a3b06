package storetest

import (
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testQueueBacklog(t *testing.T, newStore func(t *testing.T) store.Store) {
	count := func(f *fixture, ws string, kinds ...string) int {
		f.t.Helper()
		n, err := f.s.CountQueuedJobs(f.ctx, ws, kinds)
		require.NoError(f.t, err)
		return n
	}
	run(t, newStore, "CountsQueuedOfKinds", func(t *testing.T, f *fixture) {
		f.Job("a", "r1", time.Time{})
		f.Job("a", "r2", time.Now().Add(time.Hour)) // queued, due later: still waiting
		f.Job("b", "r3", time.Time{})
		f.Job("c", "r4", time.Time{})
		assert.Equal(t, 2, count(f, f.ws.ID, "a"))
		assert.Equal(t, 3, count(f, f.ws.ID, "a", "b"))
		assert.Equal(t, 0, count(f, f.ws.ID, "z"))
		assert.Equal(t, 0, count(f, f.ws.ID), "no kinds count nothing")
	})
	run(t, newStore, "ClaimedAndEndedDoNotCount", func(t *testing.T, f *fixture) {
		for range 3 {
			f.Job("a", "r", time.Time{})
		}
		claimed := f.Claim("w1", 2, longLease, "a")
		require.Len(t, claimed, 2)
		assert.Equal(t, 1, count(f, f.ws.ID, "a"), "running jobs are not waiting")
		require.NoError(t, f.s.CompleteJob(f.ctx, claimed[0].ID, "w1"))
		require.NoError(t, f.s.RetryJob(f.ctx, queue.RetryJobParams{ID: claimed[1].ID, Owner: "w1", RunAt: time.Now().Add(time.Minute), LastError: "again"}))
		assert.Equal(t, 2, count(f, f.ws.ID, "a"), "a job put back to wait counts again")
	})
	run(t, newStore, "PerWorkspace", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		f.Job("a", "r1", time.Time{})
		require.NoError(t, f.s.EnqueueJob(f.ctx, &queue.Job{WorkspaceID: other.ID, Kind: "a"}))
		require.NoError(t, f.s.EnqueueJob(f.ctx, &queue.Job{WorkspaceID: other.ID, Kind: "a"}))
		assert.Equal(t, 1, count(f, f.ws.ID, "a"))
		assert.Equal(t, 2, count(f, other.ID, "a"))
	})
}
