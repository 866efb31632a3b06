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

// benchDeliveries enqueues n signed deliveries (each a job and its log row,
// one commit), then runs a real queue worker until the receiver has
// accepted every one, and checks that the log shows each succeeded. Only
// the delivering is timed.
func benchDeliveries(b *testing.B, n int, failShare float64) {
	b.StopTimer()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, b.TempDir()+"/canvas.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rc := &deliveryReceiver{delivered: map[string]bool{}, want: n, done: make(chan struct{}), failShare: failShare}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	for range n {
		d := testDelivery(srv.URL)
		d.ID, d.Secret = "", newSecret
		d.Headers = []webhook.Header{{Name: "authorization", Value: "Bearer abc"}}
		j, err := webhook.NewJob("ws1", "bench", *d)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.EnqueueJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	d := &webhook.Deliverer{Sender: localSender(), Log: db, Schedule: []time.Duration{time.Millisecond},
		Jitter: func(d time.Duration) time.Duration { return d }}
	w := queue.NewWorker(db, queue.WorkerOptions{Concurrency: 32, PollInterval: time.Millisecond, Lease: time.Minute})
	w.Handle(webhook.JobKind, d.Handle)
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	b.StartTimer()
	start := time.Now()
	go func() { stopped <- w.Run(runCtx) }()
	<-rc.done
	// The last log rows are written after the receiver answered.
	for {
		page, err := db.ListDeliveries(ctx, webhook.DeliveryFilter{WorkspaceID: "ws1", Status: webhook.StatusSucceeded, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if page.Total == n {
			break
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
	page, err := db.ListDeliveries(ctx, webhook.DeliveryFilter{WorkspaceID: "ws1", Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	if page.Total != n {
		b.Fatalf("the log holds %d deliveries, want %d", page.Total, n)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.delivered) != n {
		b.Fatalf("%d of %d notifications delivered", len(rc.delivered), n)
	}
}

// BenchmarkDeliverer_Worker measures deliveries per second through the
// real queue worker and SQLite store to a loopback receiver: each delivery
// is a claimed job, a signed POST, its attempt in the log (one commit) and
// its job completed (one commit). Flaky30 has the receiver fail 30% of the
// attempts at random and fails unless every notification arrives.
// OneCommitCeiling is the rate of n single-row commits (an EnqueueJob each)
// on the same disk in the same run: the ceiling of any design with one
// commit per delivery.
func BenchmarkDeliverer_Worker(b *testing.B) {
	const n = 2000
	b.Run("Loopback", func(b *testing.B) {
		for range b.N {
			benchDeliveries(b, n, 0)
		}
	})
	b.Run("Flaky30", func(b *testing.B) {
		for range b.N {
			benchDeliveries(b, n, 0.3)
		}
	})
	b.Run("OneCommitCeiling", func(b *testing.B) {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, b.TempDir()+"/canvas.db")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		start := time.Now()
		for range b.N {
			for range n {
				if err := db.EnqueueJob(ctx, &queue.Job{WorkspaceID: "ws1", Kind: "bench.noop"}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "commits/s")
	})
}
