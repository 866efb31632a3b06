package queue_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/require"
)

// laneLatencyEnv names the environment variable that turns on
// TestWorker_LaneLatency, a measurement that takes several seconds.
const laneLatencyEnv = "QUEUE_LANE_LATENCY"

// TestWorker_LaneLatency is a measurement, not a test: with
// QUEUE_LANE_LATENCY=1 it prints how long 10 completion jobs take from
// enqueue to the end of their handler while 32 delivery jobs hold their
// slots (a receiver answering late), with every kind in one pool of 16 and
// with a model and a delivery lane of 16 each, against an idle worker. It
// asserts nothing about the figures.
func TestWorker_LaneLatency(t *testing.T) {
	if os.Getenv(laneLatencyEnv) == "" {
		t.Skip("a measurement: set " + laneLatencyEnv + "=1 to run it")
	}
	const hold, deliveries, completions = 2 * time.Second, 32, 10
	for _, c := range []struct {
		name       string
		deliveries int
		lanes      bool
	}{{"idle", 0, true}, {"one-pool", deliveries, false}, {"lanes", deliveries, true}} {
		db := mustNewDB(t)
		w := queue.NewWorker(db, queue.WorkerOptions{Concurrency: 16, ShutdownTimeout: time.Millisecond})
		var mu sync.Mutex
		holding := 0
		deliver := func(ctx context.Context, j *queue.Job) error {
			mu.Lock()
			holding++
			mu.Unlock()
			select {
			case <-time.After(hold):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		enqueued := map[string]time.Time{} // by RefID, from before the enqueue
		latencies := make(chan time.Duration, completions)
		complete := func(ctx context.Context, j *queue.Job) error {
			mu.Lock()
			at := enqueued[j.RefID]
			mu.Unlock()
			latencies <- time.Since(at)
			return nil
		}
		if c.lanes {
			w.HandleIn(queue.LaneDelivery, "delivery", deliver)
			w.HandleIn(queue.LaneModel, "completion", complete)
		} else {
			w.Handle("delivery", deliver)
			w.Handle("completion", complete)
		}
		stop := mustStart(t, w)
		mustEnqueueN(t, db, "delivery", c.deliveries)
		w.Notify()
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return holding == min(c.deliveries, 16)
		}, waitFor, tick)
		for i := range completions {
			j := &queue.Job{Kind: "completion", RefID: fmt.Sprint("completion-", i)}
			mu.Lock()
			enqueued[j.RefID] = time.Now()
			mu.Unlock()
			require.NoError(t, db.EnqueueJob(context.Background(), j))
			w.Notify()
		}
		var got []time.Duration
		for range completions {
			got = append(got, <-latencies)
		}
		stop()
		slices.Sort(got)
		t.Logf("%-8s %2d deliveries held %v: completion latency median %v, max %v", c.name, c.deliveries, hold,
			got[len(got)/2].Round(time.Millisecond), got[len(got)-1].Round(time.Millisecond))
	}
}
