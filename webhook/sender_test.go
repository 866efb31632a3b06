package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/internal/netguard"
	"github.com/promptcanvas/promptcanvas/webhook"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// received is one request a test receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// receiver is an httptest server that answers with the statuses it is
// given, one per request (the last one repeats), and records each request.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
	header   http.Header // added to every answer
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses, header: http.Header{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{Header: r.Header.Clone(), Body: body})
		status := http.StatusOK
		if n := len(rc.got); len(rc.statuses) > 0 {
			status = rc.statuses[min(n, len(rc.statuses))-1]
		}
		for k, v := range rc.header {
			w.Header()[k] = v
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// requests returns what the receiver got so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// localSender is a sender allowed to reach the test receivers on loopback.
func localSender() *webhook.Sender {
	return webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true})
}

func testDelivery(url string) *webhook.Delivery {
	return &webhook.Delivery{
		ID:  "msg_1",
		URL: url,
		Event: webhook.Event{Type: webhook.EventCompletionSucceeded,
			Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: json.RawMessage(`{"id":"c1"}`)},
	}
}

func TestSender_Send(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		rc := newReceiver(t, http.StatusNoContent)
		d := testDelivery(rc.URL + "/hook")
		a := localSender().Send(context.Background(), d)
		require.NoError(t, a.Err)
		assert.True(t, a.OK())
		assert.Equal(t, http.StatusNoContent, a.Status)
		got := rc.requests()
		require.Len(t, got, 1)
		var ev webhook.Event
		require.NoError(t, json.Unmarshal(got[0].Body, &ev))
		assert.Equal(t, d.Event.Type, ev.Type)
		assert.True(t, d.Event.Timestamp.Equal(ev.Timestamp))
		assert.JSONEq(t, `{"id":"c1"}`, string(ev.Data))
		assert.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
		assert.Equal(t, "msg_1", got[0].Header.Get("webhook-id"))
		ts, err := strconv.ParseInt(got[0].Header.Get("webhook-timestamp"), 10, 64)
		require.NoError(t, err)
		assert.Equal(t, a.Timestamp.Unix(), ts)
		assert.Empty(t, got[0].Header.Get("webhook-signature"), "no secret, no signature")
	})
	t.Run("HeadersInOrderAndProtected", func(t *testing.T) {
		rc := newReceiver(t)
		in := http.Header{}
		in.Set("X-Svc-Forward-Authorization", "Bearer abc")
		in.Set("X-Svc-Forward-X-Api-Key", "k1")
		in.Set("X-Svc-Forward-X-Tenant", "forwarded")
		in.Set("X-Svc-Forward-Webhook-Id", "spoofed")
		in.Set("X-Svc-Forward-Content-Type", "text/plain")
		in.Set("Authorization", "Bearer not-forwarded")
		d := testDelivery(rc.URL)
		d.Headers = append([]webhook.Header{
			{Name: "X-Tenant", Value: "fixed"},
			{Name: "Webhook-Timestamp", Value: "1"},
			{Name: "CONTENT-TYPE", Value: "text/xml"},
			{Name: "Host", Value: "evil.example"},
			{Name: "Bad Name", Value: "x"},
			{Name: "x-newline", Value: "a\r\nInjected: yes"},
		}, webhook.ForwardedHeaders(in)...)
		a := localSender().Send(context.Background(), d)
		require.NoError(t, a.Err)
		got := rc.requests()
		require.Len(t, got, 1)
		h := got[0].Header
		assert.Equal(t, "Bearer abc", h.Get("Authorization"), "forwarded, prefix removed")
		assert.Equal(t, "k1", h.Get("X-Api-Key"))
		assert.Equal(t, []string{"fixed", "forwarded"}, h.Values("X-Tenant"), "fixed first, then forwarded")
		assert.Equal(t, []string{"msg_1"}, h.Values("Webhook-Id"))
		assert.Equal(t, []string{strconv.FormatInt(a.Timestamp.Unix(), 10)}, h.Values("Webhook-Timestamp"))
		assert.Equal(t, []string{"application/json"}, h.Values("Content-Type"))
		assert.Empty(t, h.Values("Injected"))
		assert.Empty(t, h.Values("X-Newline"))
		assert.Empty(t, h.Values("X-Svc-Forward-Authorization"))
		assert.NotContains(t, h.Values("Authorization"), "Bearer not-forwarded")
	})
	t.Run("Signed", func(t *testing.T) {
		rc := newReceiver(t)
		d := testDelivery(rc.URL)
		d.Secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		require.NoError(t, localSender().Send(context.Background(), d).Err)
		got := rc.requests()
		require.Len(t, got, 1)
		wh, err := standardwebhooks.NewWebhook(d.Secret)
		require.NoError(t, err)
		assert.NoError(t, wh.Verify(got[0].Body, got[0].Header))
		wrong, err := standardwebhooks.NewWebhook("whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB")
		require.NoError(t, err)
		assert.Error(t, wrong.Verify(got[0].Body, got[0].Header))
	})
	t.Run("BadSecretPermanent", func(t *testing.T) {
		rc := newReceiver(t)
		d := testDelivery(rc.URL)
		d.Secret = "whsec_not base64!"
		a := localSender().Send(context.Background(), d)
		assert.Error(t, a.Err)
		assert.True(t, a.Permanent)
		assert.Empty(t, rc.requests())
	})
	t.Run("GonePermanent", func(t *testing.T) {
		rc := newReceiver(t, http.StatusGone)
		a := localSender().Send(context.Background(), testDelivery(rc.URL))
		assert.ErrorContains(t, a.Err, "410")
		assert.True(t, a.Permanent)
		assert.Equal(t, http.StatusGone, a.Status)
	})
	t.Run("ServerErrorRetryable", func(t *testing.T) {
		rc := newReceiver(t, http.StatusInternalServerError)
		a := localSender().Send(context.Background(), testDelivery(rc.URL))
		assert.ErrorContains(t, a.Err, "500")
		assert.False(t, a.Permanent)
		assert.Zero(t, a.RetryAfter)
	})
	t.Run("RetryAfter", func(t *testing.T) {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			rc := newReceiver(t, status)
			rc.header.Set("Retry-After", "120")
			a := localSender().Send(context.Background(), testDelivery(rc.URL))
			assert.Error(t, a.Err)
			assert.False(t, a.Permanent)
			assert.Equal(t, 2*time.Minute, a.RetryAfter, "status %d", status)
		}
	})
	t.Run("RedirectNotFollowed", func(t *testing.T) {
		target := newReceiver(t)
		rc := newReceiver(t, http.StatusFound)
		rc.header.Set("Location", target.URL)
		a := localSender().Send(context.Background(), testDelivery(rc.URL))
		assert.ErrorContains(t, a.Err, "redirect")
		assert.Equal(t, http.StatusFound, a.Status)
		assert.False(t, a.Permanent)
		assert.Empty(t, target.requests(), "the redirect target is never reached")
	})
	t.Run("Timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		s := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true, Timeout: 50 * time.Millisecond})
		a := s.Send(context.Background(), testDelivery(srv.URL))
		assert.ErrorContains(t, a.Err, "did not answer within 50ms")
		assert.False(t, a.Permanent)
		assert.Zero(t, a.Status)
	})
	t.Run("OnlyHTTP", func(t *testing.T) {
		for _, u := range []string{"ftp://example.com/x", "file:///etc/passwd", "/relative", "http://", "::"} {
			a := localSender().Send(context.Background(), testDelivery(u))
			assert.Error(t, a.Err, u)
			assert.True(t, a.Permanent, u)
		}
	})
}

func TestSender_Guard(t *testing.T) {
	rc := newReceiver(t)
	guarded := webhook.NewSender(webhook.SenderOptions{})
	t.Run("LoopbackRefused", func(t *testing.T) {
		a := guarded.Send(context.Background(), testDelivery(rc.URL))
		require.Error(t, a.Err)
		assert.True(t, errors.Is(a.Err, netguard.ErrBlocked), "error: %v", a.Err)
		assert.True(t, a.Permanent)
	})
	t.Run("NameResolvingToLoopbackRefused", func(t *testing.T) {
		_, port, err := net.SplitHostPort(rc.Listener.Addr().String())
		require.NoError(t, err)
		a := guarded.Send(context.Background(), testDelivery("http://localhost:"+port+"/hook"))
		require.Error(t, a.Err)
		assert.True(t, errors.Is(a.Err, netguard.ErrBlocked), "error: %v", a.Err)
	})
	t.Run("AllowedWhenPrivateNetworksAllowed", func(t *testing.T) {
		require.NoError(t, localSender().Send(context.Background(), testDelivery(rc.URL)).Err)
	})
	assert.Len(t, rc.requests(), 1, "only the allowed sender reached the receiver")
}

func TestSign(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"type":"example"}`)
	ts := time.Now()
	sig, err := webhook.Sign(secret, "msg_2", strconv.FormatInt(ts.Unix(), 10), body)
	require.NoError(t, err)
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	want, err := wh.Sign("msg_2", ts, body)
	require.NoError(t, err)
	assert.Equal(t, want, sig)
}

func TestCheckURL(t *testing.T) {
	assert.NoError(t, webhook.CheckURL("https://hooks.example.com/x?y=1"))
	assert.NoError(t, webhook.CheckURL("http://127.0.0.1:8080/"), "the address is judged when dialled")
	for _, bad := range []string{"", "ftp://example.com", "example.com", "https:///path"} {
		assert.Error(t, webhook.CheckURL(bad), bad)
	}
}
