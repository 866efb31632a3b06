package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
)

// BenchmarkClaimJobs claims 32 jobs from a backlog of 1,000, 10,000 and
// 100,000 queued jobs and reports the time per claim; a claim should cost
// the same whatever the backlog. Each claim's jobs are queued again, due
// now, outside the timer, so that the backlog keeps its size and every claim
// takes the 32 oldest. The backlog is written directly in one transaction
// (not timed); EnqueueJob would take one commit per job.
func BenchmarkClaimJobs(b *testing.B) {
	const claim = 32
	kinds := []string{"bench.noop"}
	for _, backlog := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("backlog-%d", backlog), func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			benchBacklog(b, db, backlog, kinds[0])
			for b.Loop() {
				jobs, err := db.ClaimJobs(ctx, "bench", kinds, claim, time.Minute)
				if err != nil || len(jobs) != claim {
					b.Fatalf("claimed %d jobs, err %v", len(jobs), err)
				}
				b.StopTimer()
				requeue(b, db, jobs)
				b.StartTimer()
			}
		})
	}
}

// benchBacklog writes n queued jobs of kind, due a little in the past and
// one microsecond apart, in one transaction.
func benchBacklog(b *testing.B, db *DB, n int, kind string) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO jobs (id, kind, status, attempts, max_attempts, run_at,
		created_at, updated_at) VALUES (?, ?, 'queued', 0, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	start := tx.now.Add(-time.Hour)
	for i := range n {
		at := formatTime(start.Add(time.Duration(i) * time.Microsecond))
		if _, err := stmt.ExecContext(ctx, db.NewID(), kind, queue.DefaultMaxAttempts, at, at, at); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// requeue puts claimed jobs back in the queue, due now: behind every other
// job of the backlog.
func requeue(b *testing.B, db *DB, jobs []*queue.Job) {
	b.Helper()
	ctx := context.Background()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'queued', run_at = ?1, attempts = 0,
		lease_owner = NULL, lease_until = NULL, updated_at = ?1 WHERE id IN (SELECT value FROM json_each(?2))`,
		formatTime(tx.now), idList(ids)); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
