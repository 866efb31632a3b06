package queue_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/require"
)

// BenchmarkQueue measures the queue on SQLite with the production settings:
// enqueue is one EnqueueJob (one commit); run is the worker's cost per job
// (a share of a claim, then CompleteJob) with a handler that does nothing,
// at the default concurrency, from a backlog of b.N jobs.
func BenchmarkQueue(b *testing.B) {
	open := func(b *testing.B) *sqlite.DB {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "queue.db"))
		require.NoError(b, err)
		b.Cleanup(func() { db.Close() })
		return db
	}
	b.Run("enqueue", func(b *testing.B) {
		db := open(b)
		ctx := context.Background()
		for b.Loop() {
			if err := db.EnqueueJob(ctx, &queue.Job{Kind: "noop"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		db := open(b)
		ctx, stop := context.WithCancel(context.Background())
		for range b.N {
			require.NoError(b, db.EnqueueJob(ctx, &queue.Job{Kind: "noop"}))
		}
		var handled atomic.Int64
		all := make(chan struct{})
		w := queue.NewWorker(db, queue.WorkerOptions{PollInterval: time.Millisecond})
		w.Handle("noop", func(context.Context, *queue.Job) error {
			if handled.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		})
		b.ResetTimer()
		returned := make(chan error)
		go func() { returned <- w.Run(ctx) }()
		<-all
		stop()
		require.NoError(b, <-returned) // every outcome recorded
		b.StopTimer()
	})
}
