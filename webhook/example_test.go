package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/promptcanvas/promptcanvas/webhook"
)

// Example shows one delivery attempt to a receiver: forwarded request
// headers arrive without their x-svc-forward- prefix, next to the
// webhook-id that stays the same on every attempt.
func Example() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Header.Get("Authorization"), r.Header.Get("Webhook-Id"), r.Header.Get("Content-Type"))
		fmt.Println(string(body))
	}))
	defer receiver.Close()

	request := http.Header{"X-Svc-Forward-Authorization": {"Bearer secret-token"}}
	d := &webhook.Delivery{
		ID:      "msg_2f9",
		URL:     receiver.URL,
		Headers: webhook.ForwardedHeaders(request),
		Event: webhook.Event{Type: webhook.EventTaskSucceeded, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Data: json.RawMessage(`{"id":"t1","status":"completed"}`)},
	}
	// Loopback is refused unless private networks are allowed.
	sender := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true})
	a := sender.Send(context.Background(), d)
	fmt.Println(a.Status, a.OK())
	// Output:
	// Bearer secret-token msg_2f9 application/json
	// {"type":"task.succeeded","timestamp":"2026-01-02T03:04:05Z","data":{"id":"t1","status":"completed"}}
	// 200 true
}

// ExampleSign signs a message the way a receiver verifies it with a
// Standard Webhooks library.
func ExampleSign() {
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
		[]byte(`{"test": 2432232314}`))
	fmt.Println(sig, err)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= <nil>
}
