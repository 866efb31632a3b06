package main

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// receiver is the load program's webhook receiver. It fails the first
// attempt of a share of the deliveries with 500, so that failFraction of
// all attempts fail, and answers 204 to every other attempt; it records,
// per run, when its notification was first answered 2xx, and counts the
// 2xx answers per webhook-id and per run, so that a delivery answered 2xx
// twice shows.
type receiver struct {
	// firstFail is the share of deliveries whose first attempt fails:
	// f/(1-f) for a failed share f of all attempts, each delivery failing
	// at most once (the real retry schedule waits 5 minutes before a
	// second retry).
	firstFail float64

	mu        sync.Mutex
	delivered map[string]time.Time // run id -> first 2xx
	okByID    map[string]int       // webhook-id -> 2xx answers
	okByRun   map[string]int       // run id -> 2xx answers
	seen      map[string]bool      // webhook-id -> an attempt came
	attempts  int64
	failed    int64

	srv *http.Server
	URL string
}

// newReceiver starts a receiver on a loopback port; failFraction must be
// below 0.5.
func newReceiver(ctx context.Context, failFraction float64) (*receiver, error) {
	r := &receiver{delivered: map[string]time.Time{}, okByID: map[string]int{}, okByRun: map[string]int{},
		seen: map[string]bool{}}
	r.setFailFraction(failFraction)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	r.URL = "http://" + ln.Addr().String() + "/hook"
	return r, nil
}

// setFailFraction sets the share of attempts the receiver fails.
func (r *receiver) setFailFraction(f float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.firstFail = f / (1 - f)
}

// Close stops the receiver.
func (r *receiver) Close() { _ = r.srv.Close() }

// ServeHTTP answers one delivery attempt.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &ev)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	r.attempts++
	first := !r.seen[id]
	r.seen[id] = true
	if first && r.firstFail > 0 && unitHash(id) < r.firstFail {
		r.failed++
		r.mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.okByID[id]++
	if ev.Data.ID != "" {
		r.okByRun[ev.Data.ID]++
		if _, ok := r.delivered[ev.Data.ID]; !ok {
			r.delivered[ev.Data.ID] = now
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// unitHash maps s to [0, 1) evenly.
func unitHash(s string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// receiverCounts are the receiver's totals.
type receiverCounts struct {
	Attempts, Failed int64
	// DuplicateIDs are webhook-ids answered 2xx more than once.
	DuplicateIDs int
}

func (r *receiver) counts() receiverCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := receiverCounts{Attempts: r.attempts, Failed: r.failed}
	for _, n := range r.okByID {
		if n > 1 {
			c.DuplicateIDs++
		}
	}
	return c
}

// asyncResult is what one open-loop run of async completions measured.
type asyncResult struct {
	Rate    float64 // offered per second
	Seconds float64 // of the load
	Offered int64
	// Accepted answered 202, Refused 429 (with Retry-After: RetryAfter of
	// them), Errors anything else or no answer; Skipped could not be sent
	// because maxInFlight requests were already waiting.
	Accepted, Refused, RetryAfter, Errors, Skipped int64
	ErrorSample                                    string
	// DeliveredInLoad are the accepted runs notified by the end of the
	// load; BacklogAtEnd the accepted ones not yet.
	DeliveredInLoad, BacklogAtEnd int64
	// Delivered are the accepted runs notified by the end of the drain,
	// Backlog those still not; DrainSeconds how long the drain took.
	Delivered, Backlog int64
	DrainSeconds       float64
	// Duplicates are accepted runs notified 2xx more than once,
	// DuplicateIDs the webhook-ids answered 2xx more than once.
	Duplicates, DuplicateIDs int64
	// EndToEnd is from sending the request to the receiver's first 2xx
	// answer, over the delivered runs.
	EndToEnd latencies
	// Attempts and FailedAttempts are the receiver's, during this run.
	Attempts, FailedAttempts int64
	CPU                      time.Duration
	PeakRSS                  int64
}

// openLoop offers rate async completions (body, which names the
// receiver's URL) a second for d, whatever the answers take, then waits up
// to drain for the accepted ones to be notified.
func openLoop(ctx context.Context, url, key string, body []byte, rate float64, d, drain time.Duration,
	maxInFlight int, pid int, rcv *receiver) asyncResult {
	tr := &http.Transport{MaxIdleConnsPerHost: maxInFlight, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	res := asyncResult{Rate: rate}
	before := rcv.counts()
	var (
		mu   sync.Mutex
		sent = map[string]time.Time{} // accepted run id -> sent at
		wg   sync.WaitGroup
		sem  = make(chan struct{}, maxInFlight)
	)
	w := watchProc(pid)
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d || ctx.Err() != nil {
			break
		}
		if wait := time.Until(at); wait > 0 {
			sleep(ctx, wait)
		}
		res.Offered++
		select {
		case sem <- struct{}{}:
		default:
			res.Skipped++
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			sentAt := time.Now()
			id, status, retryAfter, err := submit(ctx, client, url, key, body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.Errors++
				if res.ErrorSample == "" {
					res.ErrorSample = err.Error()
				}
			case status == http.StatusAccepted && id != "":
				res.Accepted++
				sent[id] = sentAt
			case status == http.StatusTooManyRequests:
				res.Refused++
				if retryAfter {
					res.RetryAfter++
				}
			default:
				res.Errors++
				if res.ErrorSample == "" {
					res.ErrorSample = "status " + strconv.Itoa(status)
				}
			}
		})
	}
	wg.Wait()
	end := time.Now()
	// Rates are over the offered window, or longer when the last answers
	// came later.
	res.Seconds = max(end.Sub(start), d).Seconds()
	count := func(by time.Time) (n int64) {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for id := range sent {
			if at, ok := rcv.delivered[id]; ok && !at.After(by) {
				n++
			}
		}
		return n
	}
	res.DeliveredInLoad = count(end)
	res.BacklogAtEnd = res.Accepted - res.DeliveredInLoad
	for time.Since(end) < drain && ctx.Err() == nil {
		if count(time.Now()) == res.Accepted {
			break
		}
		sleep(ctx, 20*time.Millisecond)
	}
	res.DrainSeconds = time.Since(end).Seconds()
	res.CPU, res.PeakRSS = w.Stop()

	rcv.mu.Lock()
	var e2e []time.Duration
	for id, at := range sent {
		if got, ok := rcv.delivered[id]; ok {
			res.Delivered++
			e2e = append(e2e, got.Sub(at))
			if rcv.okByRun[id] > 1 {
				res.Duplicates++
			}
		}
	}
	rcv.mu.Unlock()
	res.Backlog = res.Accepted - res.Delivered
	res.EndToEnd = summarise(e2e)
	after := rcv.counts()
	res.Attempts, res.FailedAttempts = after.Attempts-before.Attempts, after.Failed-before.Failed
	res.DuplicateIDs = int64(after.DuplicateIDs - before.DuplicateIDs)
	return res
}

// submit posts one async completion and returns the run id of a 202, the
// status, and whether a 429 carried Retry-After.
func submit(ctx context.Context, client *http.Client, url, key string, body []byte) (string, int, bool, error) {
	req, err := newRequest(ctx, http.MethodPost, url, key, body)
	if err != nil {
		return "", 0, false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, false, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", 0, false, err
	}
	var out struct {
		ID string `json:"id"`
	}
	if resp.StatusCode == http.StatusAccepted {
		_ = json.Unmarshal(raw, &out)
	}
	return out.ID, resp.StatusCode, resp.Header.Get("Retry-After") != "", nil
}
