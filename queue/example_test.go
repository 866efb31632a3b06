package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// Example_worker runs one job through a worker on an SQLite store: enqueue,
// handle, and read the finished job back.
func Example_worker() {
	ctx, stop := context.WithCancel(context.Background())
	dir, err := os.MkdirTemp("", "queue-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "queue.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()

	w := queue.NewWorker(db, queue.WorkerOptions{Concurrency: 2, Lease: 10 * time.Second})
	handled := make(chan struct{})
	w.Handle("greet", func(ctx context.Context, j *queue.Job) error {
		fmt.Printf("hello, %s\n", j.Payload)
		close(handled)
		return nil
	})
	returned := make(chan error)
	go func() { returned <- w.Run(ctx) }()

	j := &queue.Job{Kind: "greet", RefID: "greeting-1", Payload: []byte(`"world"`)}
	if err := db.EnqueueJob(ctx, j); err != nil {
		panic(err)
	}
	w.Notify() // start now rather than at the next poll
	<-handled
	stop() // graceful: Run waits for the handler's outcome to be recorded
	if err := <-returned; err != nil {
		panic(err)
	}

	done, err := db.GetJob(context.Background(), j.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(done.Status, "after", done.Attempts, "attempt")
	// Output:
	// hello, "world"
	// succeeded after 1 attempt
}
