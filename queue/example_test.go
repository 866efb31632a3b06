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

// ExampleWorker_HandleIn puts kinds in lanes: a delivery waiting on its
// receiver holds the delivery lane's one slot, and a completion still runs
// at once in the model lane.
func ExampleWorker_HandleIn() {
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

	w := queue.NewWorker(db, queue.WorkerOptions{Lanes: map[string]queue.LaneOptions{
		queue.LaneDelivery: {Concurrency: 1},
	}})
	receiverAnswers, delivered, completed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	w.HandleIn(queue.LaneDelivery, "deliver", func(ctx context.Context, j *queue.Job) error {
		select {
		case <-receiverAnswers:
		case <-ctx.Done():
			return ctx.Err()
		}
		fmt.Println("delivered", j.RefID)
		close(delivered)
		return nil
	})
	w.HandleIn(queue.LaneModel, "complete", func(ctx context.Context, j *queue.Job) error {
		fmt.Println("completed", j.RefID)
		close(completed)
		return nil
	})
	returned := make(chan error)
	go func() { returned <- w.Run(ctx) }()

	for _, j := range []*queue.Job{{Kind: "deliver", RefID: "delivery-1"}, {Kind: "complete", RefID: "run-1"}} {
		if err := db.EnqueueJob(ctx, j); err != nil {
			panic(err)
		}
	}
	w.Notify()
	<-completed // while the delivery still waits
	close(receiverAnswers)
	<-delivered
	stop()
	if err := <-returned; err != nil {
		panic(err)
	}
	// Output:
	// completed run-1
	// delivered delivery-1
}
