package storetest

import (
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testQueueStats checks queue.StatsStore on a store that implements it.
func testQueueStats(t *testing.T, newStore func(t *testing.T) store.Store) {
	stats := func(t *testing.T, f *fixture) map[string]queue.KindStats {
		t.Helper()
		ss, ok := f.s.(queue.StatsStore)
		if !ok {
			t.Skip("the store does not implement queue.StatsStore")
		}
		list, err := ss.QueueStats(f.ctx)
		require.NoError(t, err)
		out := map[string]queue.KindStats{}
		for i, s := range list {
			if i > 0 {
				assert.Less(t, list[i-1].Kind, s.Kind, "kind order")
			}
			out[s.Kind] = s
		}
		return out
	}

	run(t, newStore, "Empty", func(t *testing.T, f *fixture) {
		assert.Empty(t, stats(t, f))
	})

	run(t, newStore, "CountsByKindAndState", func(t *testing.T, f *fixture) {
		old := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		f.Job("a.run", "r1", old)
		f.Job("a.run", "r2", time.Time{})
		f.Job("a.run", "r3", time.Now().Add(time.Hour))
		f.Job("b.send", "r4", time.Time{})
		f.Job("b.send", "r5", time.Time{})
		claimed := f.Claim("w1", 1, longLease, "b.send")
		require.Len(t, claimed, 1)
		done := f.Job("c.done", "r6", time.Time{})
		require.Len(t, f.Claim("w1", 1, longLease, "c.done"), 1)
		require.NoError(t, f.s.CompleteJob(f.ctx, done.ID, "w1"))

		got := stats(t, f)
		require.Len(t, got, 2, "finished kinds are left out: %v", got)
		a := got["a.run"]
		assert.Equal(t, 2, a.Due)
		assert.Equal(t, 1, a.Scheduled)
		assert.Zero(t, a.Running)
		assert.WithinDuration(t, old, a.OldestDue, time.Second)
		b := got["b.send"]
		assert.Equal(t, 1, b.Due)
		assert.Equal(t, 1, b.Running)
		assert.Zero(t, b.Scheduled)
	})

	run(t, newStore, "OnlyScheduled", func(t *testing.T, f *fixture) {
		f.Job("a.run", "r1", time.Now().Add(time.Hour))
		a := stats(t, f)["a.run"]
		assert.Zero(t, a.Due)
		assert.True(t, a.OldestDue.IsZero())
		assert.Equal(t, 1, a.Scheduled)
	})
}
