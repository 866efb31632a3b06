package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// request builds the i-th request of client c of a closed-loop run.
type request func(ctx context.Context, c, i int) (*http.Request, error)

// newRequest returns a request of method to url with the bearer key and,
// when body is not nil, the JSON body.
func newRequest(ctx context.Context, method, url, key string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// latencies summarises the time of each answered request.
type latencies struct {
	P50, P99, P999 time.Duration
}

func summarise(d []time.Duration) latencies {
	if len(d) == 0 {
		return latencies{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return latencies{P50: at(0.50), P99: at(0.99), P999: at(0.999)}
}

// runResult is what one run of one target measured.
type runResult struct {
	// Requests are the answers with the expected status, Errors the
	// others (a wrong status or no answer), ErrorSample the first error.
	Requests    int64
	Errors      int64
	ErrorSample string
	Seconds     float64
	latencies
	// CPU is the CPU time the target process used during the run, PeakRSS
	// its largest resident set; both zero when its process is unknown.
	CPU     time.Duration
	PeakRSS int64
	// samples are the latencies, sorted, for merging runs.
	samples []time.Duration
}

// Throughput is the expected answers per second.
func (r runResult) Throughput() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.Requests) / r.Seconds
}

// CPUPerRequest is the target's CPU time per expected answer.
func (r runResult) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// closedLoop runs clients keep-alive clients against a target for d after
// a warm-up: each sends its next request as soon as the previous one is
// answered. An answer with a status other than want is an error. pid is
// the target's process (0: unknown).
func closedLoop(ctx context.Context, clients int, warmup, d time.Duration, pid int, want int, req request) runResult {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var (
		mu      sync.Mutex
		res     runResult
		all     []time.Duration
		measure = make(chan struct{})
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			var lat []time.Duration
			var n, errs int64
			var sample string
			counting := false
			for i := 0; ; i++ {
				select {
				case <-stop:
					mu.Lock()
					res.Requests += n
					res.Errors += errs
					if res.ErrorSample == "" {
						res.ErrorSample = sample
					}
					all = append(all, lat...)
					mu.Unlock()
					return
				case <-measure:
					if !counting {
						counting, lat, n, errs, sample = true, lat[:0], 0, 0, ""
					}
				default:
				}
				r, err := req(ctx, c, i)
				if err != nil {
					errs++
					sample = err.Error()
					continue
				}
				start := time.Now()
				status, err := roundTrip(client, r)
				took := time.Since(start)
				if err == nil && status != want {
					err = fmt.Errorf("%s %s: status %d, want %d", r.Method, r.URL.Path, status, want)
				}
				if err != nil {
					errs++
					if sample == "" {
						sample = err.Error()
					}
					if ctx.Err() != nil {
						<-stop
					}
					continue
				}
				n++
				lat = append(lat, took)
			}
		})
	}
	sleep(ctx, warmup)
	w := watchProc(pid)
	start := time.Now()
	close(measure)
	sleep(ctx, d)
	close(stop)
	res.Seconds = time.Since(start).Seconds()
	wg.Wait()
	res.CPU, res.PeakRSS = w.Stop()
	res.latencies = summarise(all)
	res.samples = all
	return res
}

// roundTrip sends r and reads its whole answer.
func roundTrip(client *http.Client, r *http.Request) (int, error) {
	resp, err := client.Do(r)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
