package webhook_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// deliveryReceiver is a loopback receiver that fails a share of the
// requests at random and signals once every expected delivery has been
// answered 2xx at least once.
type deliveryReceiver struct {
	mu        sync.Mutex
	delivered map[string]bool
	want      int
	done      chan struct{}
	failShare float64
}

func (rc *deliveryReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if rand.Float64() < rc.failShare {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rc.mu.Lock()
	id := r.Header.Get("webhook-id")
	if !rc.delivered[id] {
		rc.delivered[id] = true
		if len(rc.delivered) == rc.want {
			close(rc.done)
		}
	}
	rc.mu.Unlock()
}

// benchMaxAttempts is the attempt budget of a benchmark delivery: with 30%
// of the attempts failing at random, the default budget (10) lets about one
// delivery in 170,000 fail for good, which a long run reaches; with this
// one none does.
const benchMaxAttempts = 100

// benchDeliveries enqueues b.N signed deliveries (each a job and its log
// row, all in one commit, not timed), then runs a real queue worker until
// the receiver has accepted every one and the log shows each succeeded.
// A delivery that fails for good ends the benchmark with an error rather
// than a wait that would never end.
func benchDeliveries(b *testing.B, failShare float64) {
	n := b.N
	ctx := context.Background()
	db, err := sqlite.Open(ctx, b.TempDir()+"/canvas.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rc := &deliveryReceiver{delivered: map[string]bool{}, want: n, done: make(chan struct{}), failShare: failShare}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ds := make([]webhook.Outgoing, n)
	for i := range ds {
		d := testDelivery(srv.URL)
		d.ID, d.Secret = "", newSecret
		d.Headers = []webhook.Header{{Name: "authorization", Value: "Bearer abc"}}
		if ds[i], err = webhook.NewOutgoing("ws1", "bench", *d); err != nil {
			b.Fatal(err)
		}
		ds[i].Job.MaxAttempts = benchMaxAttempts
	}
	if err := db.CreateDeliveries(ctx, ds); err != nil {
		b.Fatal(err)
	}
	d := &webhook.Deliverer{Sender: localSender(), Log: db, Schedule: []time.Duration{time.Millisecond},
		Jitter: func(d time.Duration) time.Duration { return d }}
	w := queue.NewWorker(db, queue.WorkerOptions{Concurrency: 32, PollInterval: time.Millisecond, Lease: time.Minute})
	w.Handle(webhook.JobKind, d.Handle)
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	b.ResetTimer()
	start := time.Now()
	go func() { stopped <- w.Run(runCtx) }()
	// count returns how many logged deliveries have status.
	count := func(status string) int {
		page, err := db.ListDeliveries(ctx, webhook.DeliveryFilter{WorkspaceID: "ws1", Status: status, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		return page.Total
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for received := false; !received; {
		select {
		case <-rc.done:
			received = true
		case <-tick.C:
			if failed := count(webhook.StatusFailed); failed > 0 {
				b.Fatalf("%d deliveries failed for good", failed)
			}
		}
	}
	// The last log rows are written after the receiver answered.
	for count(webhook.StatusSucceeded) != n {
		if failed := count(webhook.StatusFailed); failed > 0 {
			b.Fatalf("%d deliveries failed for good", failed)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "deliveries/s")
	if total := count(""); total != n {
		b.Fatalf("the log holds %d deliveries, want %d", total, n)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.delivered) != n {
		b.Fatalf("%d of %d notifications delivered", len(rc.delivered), n)
	}
}

// BenchmarkDeliverer_Worker measures deliveries per second through the
// real queue worker and SQLite store to a loopback receiver: each of the
// b.N deliveries is a claimed job, a signed POST, its attempt in the log
// (one commit) and its job completed (one commit). Flaky30 has the
// receiver fail 30% of the attempts at random and fails unless every
// notification arrives. OneCommitCeiling is the rate of single-row commits
// (an EnqueueJob each, one per b.N) on the same disk in the same run: the
// ceiling of any design with one commit per delivery.
func BenchmarkDeliverer_Worker(b *testing.B) {
	b.Run("Loopback", func(b *testing.B) { benchDeliveries(b, 0) })
	b.Run("Flaky30", func(b *testing.B) { benchDeliveries(b, 0.3) })
	b.Run("OneCommitCeiling", func(b *testing.B) {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, b.TempDir()+"/canvas.db")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if err := db.EnqueueJob(ctx, &queue.Job{WorkspaceID: "ws1", Kind: "bench.noop"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
	})
}
