package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/promptcanvas/promptcanvas/webhook"
)

// BenchmarkSender_Send measures one signed delivery attempt to a local
// receiver, against a bare POST of the same body with net/http.
func BenchmarkSender_Send(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	d := testDelivery(srv.URL)
	d.Headers = []webhook.Header{{Name: "authorization", Value: "Bearer abc"}}
	d.Secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	b.Run("Sender", func(b *testing.B) {
		s := localSender()
		for b.Loop() {
			if a := s.Send(context.Background(), d); a.Err != nil {
				b.Fatal(a.Err)
			}
		}
	})
	b.Run("BareNetHTTP", func(b *testing.B) {
		body, err := json.Marshal(d.Event)
		if err != nil {
			b.Fatal(err)
		}
		client := &http.Client{}
		for b.Loop() {
			resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
