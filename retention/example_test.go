package retention_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// Example wires retention as a server does at start-up: the handler on the
// worker, then Schedule, which queues one purge however often it is
// called.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "retention-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()

	p := retention.New(retention.Options{Store: db, Jobs: retention.DefaultJobs,
		Deliveries: retention.DefaultDeliveries})
	w := queue.NewWorker(db, queue.WorkerOptions{})
	w.Handle(retention.JobKind, p.Handle)
	for range 2 {
		queued, err := p.Schedule(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println("purge queued:", queued)
	}
	n, err := p.Purge(ctx) // what the job does: nothing is old enough yet
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", n)
	// Output:
	// purge queued: true
	// purge queued: false
	// {Jobs:0 Deliveries:0 Runs:0 WorkflowRuns:0 AuditEvents:0}
}
