package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logHookRequest is one request a logReceiver got.
type logHookRequest struct {
	Header http.Header
	Body   []byte
}

// logReceiver is a webhook endpoint on loopback that answers with the
// statuses it is given, one per request (the last repeats).
type logReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []logHookRequest
	statuses []int
}

func newLogReceiver(t *testing.T, statuses ...int) *logReceiver {
	t.Helper()
	rc := &logReceiver{statuses: statuses}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, logHookRequest{Header: r.Header.Clone(), Body: body})
		status := http.StatusOK
		if n := len(rc.got); len(rc.statuses) > 0 {
			status = rc.statuses[min(n, len(rc.statuses))-1]
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte("ack"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *logReceiver) requests() []logHookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]logHookRequest(nil), rc.got...)
}

// withDeliveries serves applications and the delivery log; the sender may
// reach loopback unless guarded.
func withDeliveries(guarded bool) envOption {
	return func(t testing.TB, db *sqlite.DB, o *server.Options) {
		o.Applications = webhook.NewApplicationService(webhook.ApplicationOptions{Store: db, Canvases: db})
		o.Deliveries = webhook.NewDeliveryService(webhook.DeliveryOptions{Log: db, Applications: db, Canvases: db,
			Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: !guarded})})
	}
}

// startDeliveries runs a queue worker delivering webhooks with a tiny retry
// schedule until the test ends.
func startDeliveries(t *testing.T, db *sqlite.DB) {
	t.Helper()
	d := &webhook.Deliverer{Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true}),
		Schedule: []time.Duration{time.Millisecond}, Log: db, Subscriptions: db}
	w := queue.NewWorker(db, queue.WorkerOptions{PollInterval: 5 * time.Millisecond, Lease: 5 * time.Second})
	w.Handle(webhook.JobKind, d.Handle)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-stopped)
	})
}

// createApp creates an application whose subscription sends to url with
// headers, and returns its id and signing secret.
func createApp(t *testing.T, e *testEnv, url string, headers ...webhook.Header) (id, secret string) {
	t.Helper()
	if headers == nil {
		headers = []webhook.Header{}
	}
	res := e.Do("POST", "/applications", e.Admin, map[string]any{"name": "shop",
		"events": map[string]any{"enabled": true, "url": url, "headers": headers}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var app struct{ ID, Secret string }
	res.JSON(t, &app)
	require.NotEmpty(t, app.Secret)
	return app.ID, app.Secret
}

// verifyHook checks a request's signature with the Standard Webhooks
// library.
func verifyHook(t *testing.T, secret string, r logHookRequest) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	assert.NoError(t, wh.Verify(r.Body, r.Header))
}

// enqueueHook writes a delivery to url for the application (or none), its
// job and its log row, and returns its webhook-id.
func enqueueHook(t *testing.T, e *testEnv, appID, url, eventType string, headers ...webhook.Header) string {
	t.Helper()
	o, err := webhook.NewOutgoing(e.Workspace.ID, "ref", webhook.Delivery{URL: url, ApplicationID: appID, Headers: headers,
		Event: webhook.Event{Type: eventType, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{"id":"r1"}`)}})
	require.NoError(t, err)
	require.NoError(t, e.Store.CreateDeliveries(context.Background(), []webhook.Outgoing{o}))
	return o.Delivery.ID
}

// deliveryPage is the envelope of GET /webhooks/deliveries.
type deliveryPage struct {
	Data []webhook.LoggedDelivery `json:"data"`
	Meta struct {
		TotalCount int `json:"totalCount"`
	} `json:"meta"`
}

func TestDelivery_Log(t *testing.T) {
	e := newTestEnv(t, withDeliveries(false))
	rc := newLogReceiver(t, http.StatusInternalServerError, http.StatusOK)
	appID, secret := createApp(t, e, rc.URL, webhook.Header{Name: "x-tenant", Value: "t1"})
	appHook := enqueueHook(t, e, appID, rc.URL, webhook.EventCompletionSucceeded, webhook.Header{Name: "x-tenant", Value: "t1"})
	plainHook := enqueueHook(t, e, "", rc.URL, webhook.EventTaskSucceeded)

	list := func(query string) deliveryPage {
		t.Helper()
		res := e.Do("GET", "/webhooks/deliveries"+query, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		var page deliveryPage
		res.JSON(t, &page)
		return page
	}
	page := list("")
	assert.Equal(t, 2, page.Meta.TotalCount, "queued deliveries are in the log at once")
	startDeliveries(t, e.Store)
	require.Eventually(t, func() bool { return list("?status=succeeded").Meta.TotalCount == 2 }, 10*time.Second, 5*time.Millisecond)

	t.Run("OK", func(t *testing.T) {
		page := list("")
		require.Len(t, page.Data, 2)
		assert.Equal(t, plainHook, page.Data[0].ID, "newest first")
		assert.Nil(t, page.Data[0].ApplicationID)
		page = list("?applicationId=" + appID)
		require.Len(t, page.Data, 1)
		assert.Equal(t, appHook, page.Data[0].ID)
		page = list("?eventType=task.succeeded&limit=1")
		require.Len(t, page.Data, 1)
		assert.Equal(t, plainHook, page.Data[0].ID)
		assert.Zero(t, list("?status=failed").Meta.TotalCount)

		res := e.Do("GET", "/webhooks/deliveries/"+appHook, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status)
		var d webhook.LoggedDelivery
		res.JSON(t, &d)
		assert.Equal(t, webhook.StatusSucceeded, d.Status)
		assert.Equal(t, webhook.EventCompletionSucceeded, d.EventType)
		require.NotEmpty(t, d.Attempts)
		last := d.Attempts[len(d.Attempts)-1]
		require.NotNil(t, last.StatusCode)
		assert.Equal(t, http.StatusOK, *last.StatusCode)
		assert.Equal(t, "ack", last.ResponseBody)
		assert.Len(t, d.Attempts, d.AttemptCount)

		for _, r := range rc.requests() {
			if r.Header.Get("webhook-id") == appHook {
				verifyHook(t, secret, r)
				assert.Equal(t, "t1", r.Header.Get("x-tenant"))
			} else {
				assert.Empty(t, r.Header.Get("webhook-signature"), "a per-request webhook_url has no secret")
			}
		}
	})
	t.Run("Redeliver", func(t *testing.T) {
		before := len(rc.requests())
		res := e.Do("POST", "/webhooks/deliveries/"+appHook+"/redeliver", e.Admin, nil)
		require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
		var d webhook.LoggedDelivery
		res.JSON(t, &d)
		assert.Equal(t, webhook.StatusPending, d.Status)
		require.Eventually(t, func() bool { return len(rc.requests()) > before }, 10*time.Second, 5*time.Millisecond)
		again := rc.requests()[before]
		assert.Equal(t, appHook, again.Header.Get("webhook-id"), "the same webhook-id")
		verifyHook(t, secret, again)
	})
	t.Run("Forbidden", func(t *testing.T) {
		res := e.Do("POST", "/webhooks/deliveries/"+appHook+"/redeliver", e.Editor, nil)
		assert.Equal(t, http.StatusForbidden, res.Status)
	})
	t.Run("NotFound", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/webhooks/deliveries/"+uuid.NewString(), e.Viewer, nil).Status)
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		stranger := e.KeyIn(other.ID, canvas.RoleAdmin)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/webhooks/deliveries/"+appHook, stranger, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("POST", "/webhooks/deliveries/"+appHook+"/redeliver", stranger, nil).Status)
		res := e.Do("GET", "/webhooks/deliveries", stranger, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.Contains(t, string(res.Body), `"totalCount":0`)
	})
	t.Run("Validation", func(t *testing.T) {
		assert.Equal(t, http.StatusUnprocessableEntity, e.Do("GET", "/webhooks/deliveries?status=lost", e.Viewer, nil).Status)
		assert.Equal(t, http.StatusUnprocessableEntity, e.Do("GET", "/webhooks/deliveries?limit=0", e.Viewer, nil).Status)
	})
}

// testResult is the answer of POST /applications/{id}/events/test.
type testResult struct {
	Delivered    bool   `json:"delivered"`
	Status       *int   `json:"status"`
	LatencyMs    int64  `json:"latencyMs"`
	Error        string `json:"error"`
	ResponseBody string `json:"responseBody"`
}

func TestApplication_EventsTest(t *testing.T) {
	e := newTestEnv(t, withDeliveries(false))
	rc := newLogReceiver(t)
	appID, secret := createApp(t, e, rc.URL, webhook.Header{Name: "x-tenant", Value: "t1"})
	send := func(token string, body any) (*testResponse, testResult) {
		t.Helper()
		res := e.Do("POST", "/applications/"+appID+"/events/test", token, body)
		var out testResult
		if res.Status == http.StatusOK {
			res.JSON(t, &out)
		}
		return res, out
	}
	t.Run("OK", func(t *testing.T) {
		res, out := send(e.Admin, nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		assert.True(t, out.Delivered)
		require.NotNil(t, out.Status)
		assert.Equal(t, http.StatusOK, *out.Status)
		assert.Equal(t, "ack", out.ResponseBody)
		got := rc.requests()
		require.Len(t, got, 1)
		verifyHook(t, secret, got[0])
		assert.Equal(t, "t1", got[0].Header.Get("x-tenant"))
		var ev webhook.Event
		require.NoError(t, json.Unmarshal(got[0].Body, &ev))
		assert.Equal(t, webhook.EventTest, ev.Type)
		assert.JSONEq(t, `{"applicationId":"`+appID+`"}`, string(ev.Data))
	})
	t.Run("UnsavedSettings", func(t *testing.T) {
		other := newLogReceiver(t)
		res, out := send(e.Admin, map[string]any{"url": other.URL,
			"headers": []webhook.Header{{Name: "x-one", Value: "1"}, {Name: "x-two", Value: "2"}}})
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		assert.True(t, out.Delivered)
		got := other.requests()
		require.Len(t, got, 1)
		assert.Equal(t, "1", got[0].Header.Get("x-one"))
		assert.Equal(t, "2", got[0].Header.Get("x-two"))
		assert.Empty(t, got[0].Header.Get("x-tenant"), "the given headers replace the stored ones")
		verifyHook(t, secret, got[0])
	})
	t.Run("ReceiverFails", func(t *testing.T) {
		down := newLogReceiver(t, http.StatusServiceUnavailable)
		res, out := send(e.Admin, map[string]any{"url": down.URL})
		require.Equal(t, http.StatusOK, res.Status)
		assert.False(t, out.Delivered)
		require.NotNil(t, out.Status)
		assert.Equal(t, http.StatusServiceUnavailable, *out.Status)
		assert.Contains(t, out.Error, "503")
	})
	t.Run("Forbidden", func(t *testing.T) {
		res, _ := send(e.Editor, nil)
		assert.Equal(t, http.StatusForbidden, res.Status)
	})
	t.Run("NotFound", func(t *testing.T) {
		res := e.Do("POST", "/applications/"+uuid.NewString()+"/events/test", e.Admin, nil)
		assert.Equal(t, http.StatusNotFound, res.Status)
	})
	t.Run("Validation", func(t *testing.T) {
		res, _ := send(e.Admin, map[string]any{"url": "ftp://example.com/hook"})
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status)
	})
	t.Run("Guarded", func(t *testing.T) {
		g := newTestEnv(t, withDeliveries(true))
		target := newLogReceiver(t)
		id, _ := createApp(t, g, target.URL)
		res := g.Do("POST", "/applications/"+id+"/events/test", g.Admin, nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		var out testResult
		res.JSON(t, &out)
		assert.False(t, out.Delivered)
		assert.Nil(t, out.Status)
		assert.Contains(t, out.Error, "not a public address")
		assert.Empty(t, target.requests(), "the guard refuses loopback")
	})
}
