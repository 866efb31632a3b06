package server

import (
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"
)

func TestLimiterSet_Bounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ls := newLimiterSet(rate.Limit(1), 1, 2)
	assert.Zero(t, ls.take("a", now))
	assert.Equal(t, time.Second, ls.take("a", now), "a's one token is spent")
	assert.Zero(t, ls.take("b", now))
	assert.Zero(t, ls.take("c", now), "c takes the place of a, the least recently used")
	assert.Equal(t, 2, ls.len(), "the set never holds more than its bound")
	assert.Zero(t, ls.take("a", now), "a forgotten name starts afresh")
	assert.Equal(t, 2, ls.len())
	assert.Equal(t, 500*time.Millisecond, ls.take("a", now.Add(500*time.Millisecond)), "half a token came back")
	assert.Zero(t, ls.take("a", now.Add(time.Second)))
}

func TestLimiterSet_WaitFor(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ls := newLimiterSet(rate.Limit(2), 2, 10)
	assert.Zero(t, ls.waitFor("x", now), "an unknown name has its burst")
	ls.take("x", now)
	assert.Zero(t, ls.waitFor("x", now), "one token is left")
	ls.take("x", now)
	assert.Equal(t, 500*time.Millisecond, ls.waitFor("x", now))
	assert.Equal(t, 1, ls.len(), "waitFor creates nothing")
	assert.Zero(t, ls.waitFor("y", now))
	assert.Equal(t, 1, ls.len())
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1",
		1500 * time.Millisecond: "2", time.Minute: "60"} {
		assert.Equal(t, want, retryAfterSeconds(d), "%s", d)
	}
}

func TestPredictFromLane(t *testing.T) {
	lane := queue.LaneLoad{Concurrency: 16, Running: 16, MeanRun: 40 * time.Millisecond}
	for _, tc := range []struct {
		name           string
		load           queue.LaneLoad
		due, arriving  int
		want           time.Duration
		wantPrediction bool
	}{
		{"NoJobEndedYet", queue.LaneLoad{Concurrency: 16}, 100, 1, 0, false},
		{"NoJobEndedYetSlotsFree", queue.LaneLoad{Concurrency: 16, Running: 2}, 13, 1, 0, true},
		{"NoLane", queue.LaneLoad{}, 0, 1, 0, false},
		{"FreeSlots", queue.LaneLoad{Concurrency: 16, Running: 10, MeanRun: time.Second}, 3, 3, 0, true},
		// 32 jobs wait for 16 slots that each free every 40 ms: the last
		// starts after two rounds.
		{"BusySlots", lane, 30, 2, 80 * time.Millisecond, true},
		{"SomeSlotsFree", queue.LaneLoad{Concurrency: 16, Running: 8, MeanRun: 40 * time.Millisecond}, 40, 0, 80 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := predictFromLane(tc.load, tc.due, tc.arriving)
			assert.Equal(t, tc.wantPrediction, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
