package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkConditionalRead measures a revalidation of GET
// /environment/version that answers 304 Not Modified (API key
// authentication, the access check, the cached served version and its
// ETag) against a bare net/http handler answering 304 with the same ETag,
// in the same run: through ServeHTTP, and over loopback with parallel
// clients.
func BenchmarkConditionalRead(b *testing.B) {
	s := mustBenchServed(b)
	rec := s.serve()
	etag := rec.Header().Get("ETag")
	require.NotEmpty(b, etag)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.body)
	})
	handlers := []struct {
		name string
		h    http.Handler
	}{{"Real", s.handler}, {"Bare", bare}}
	for _, hh := range handlers {
		b.Run("ServeHTTP/"+hh.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				req := s.request()
				req.Header.Set("If-None-Match", etag)
				rec := httptest.NewRecorder()
				hh.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusNotModified {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
	for _, hh := range handlers {
		b.Run("Loopback/"+hh.name, func(b *testing.B) {
			loopback(b, hh.h, s.path, s.token, map[string]string{"If-None-Match": etag},
				func(status int, _ int64) bool { return status == http.StatusNotModified })
		})
	}
}

// BenchmarkWatchFanout measures how long after a publish every one of 1,000
// watchers (each its own GET /environment/watch over loopback) has the
// event: each op is one publish, and the p50 and p99 of the watchers'
// delays over all ops are reported. It asserts nothing about time.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers = 1000
	e := newTestEnv(b)
	ec := mustEnvCanvas(b, e, 2)
	ec.mustPublish(b, "production", 1)
	url := e.URL + "/environment/watch?" + ec.target("production")
	transport := &http.Transport{MaxIdleConnsPerHost: watchers}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Each watcher sends the version id of every event it reads.
	type seen struct {
		at        time.Time
		versionID string
	}
	events := make(chan seen, watchers*4)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+e.Viewer)
		resp, err := client.Do(req)
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, resp.StatusCode)
		wg.Go(func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line := sc.Text()
				if i := strings.Index(line, `"versionId":"`); i >= 0 {
					id := line[i+len(`"versionId":"`):]
					id = id[:strings.IndexByte(id, '"')]
					select {
					case events <- seen{at: time.Now(), versionID: id}:
					case <-ctx.Done():
						return
					}
				}
			}
		})
	}
	for range watchers { // the first state of every stream
		<-events
	}

	var delays []time.Duration
	next := 2
	b.ResetTimer()
	for b.Loop() {
		want := ec.Versions[next-1].ID
		start := time.Now()
		ec.publish(e.Editor, "production", next)
		for got := 0; got < watchers; {
			ev := <-events
			if ev.versionID == want {
				delays = append(delays, ev.at.Sub(start))
				got++
			}
		}
		next = 3 - next
	}
	b.StopTimer()
	slices.Sort(delays)
	pct := func(p float64) float64 {
		return float64(delays[int(p*float64(len(delays)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(watchers), "watchers")
}
