package server

import (
	"io"
	"net/http"
	"time"
)

// MinBodyRate wraps h so that a request body must keep arriving: the time
// the server spends waiting for it may exceed grace only by the time its
// bytes so far earn at minRate bytes a second, and one wait may never last
// longer than grace. A body that falls behind is cut off: its reads fail,
// the handler answers as for any unreadable body (400 BAD_REQUEST), and the
// connection is closed. Only waiting for the client counts, not the time
// the handler spends between reads, so a large body sent at a normal pace
// is never cut, however long it takes; a client that trickles one byte a
// second holds its connection for about grace.
//
// The limit is the connection's read deadline
// (http.ResponseController.SetReadDeadline), set before each read of the
// body and cleared once it is read, so it replaces http.Server.ReadTimeout
// for requests with a body. minRate zero or negative returns h itself.
func MinBodyRate(h http.Handler, minRate int64, grace time.Duration) http.Handler {
	if minRate <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(grace)); err != nil {
			h.ServeHTTP(w, r) // the writer cannot set deadlines: nothing to enforce with
			return
		}
		r.Body = &rateBody{ReadCloser: r.Body, rc: rc, rate: minRate, grace: grace}
		h.ServeHTTP(w, r)
	})
}

// rateBody sets the connection's read deadline before each read of its
// body from the time it has waited for the client so far.
type rateBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	rate   int64
	grace  time.Duration
	read   int64         // bytes read so far
	waited time.Duration // time spent in Read so far
	done   bool
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	start := time.Now()
	_ = b.rc.SetReadDeadline(start.Add(b.budget()))
	n, err := b.ReadCloser.Read(p)
	b.waited += time.Since(start)
	b.read += int64(n)
	if err == io.EOF {
		// The body is in: the connection waits for the next request under
		// the server's own timeouts again.
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// budget is how long the next read may wait: grace plus what the bytes so
// far earned at the minimum rate, less the waiting already done, and never
// more than grace. It is zero or negative once the body is behind.
func (b *rateBody) budget() time.Duration {
	earned := b.grace + time.Duration(float64(b.read)/float64(b.rate)*float64(time.Second)) - b.waited
	return min(earned, b.grace)
}
