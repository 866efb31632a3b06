package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// sse answers a completion stream: one chunk event per piece (split across
// two data lines when split is set, with a comment first), then tail.
func sse(pieces []string, split bool, tail string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": heartbeat\n\n")
		for _, p := range pieces {
			b, _ := json.Marshal(wire.Chunk{ID: "r1", Object: wire.ChunkObject,
				Choices: []wire.ChunkChoice{{Delta: wire.ChunkDelta{Content: wire.Content{Text: p}}}}})
			if split {
				// A data field may span lines; they are joined with "\n",
				// which JSON reads as whitespace.
				i := strings.Index(string(b), ",")
				fmt.Fprintf(w, "data: %s\ndata: %s\n\n", b[:i+1], b[i+1:])
			} else {
				fmt.Fprintf(w, "data: %s\n\n", b)
			}
		}
		fmt.Fprint(w, tail)
	}
}

func TestClient_CompleteStream(t *testing.T) {
	ctx := context.Background()
	req := wire.CompletionRequest{CanvasID: "c1"}
	collect := func(c *client.Client) (string, error) {
		var b strings.Builder
		err := c.CompleteStream(ctx, req, func(s string) error { b.WriteString(s); return nil })
		return b.String(), err
	}

	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("Done/split=%v", split), func(t *testing.T) {
			c := mustClient(t, sse([]string{"Hel", "lo"}, split, "data: [DONE]\n\n"), client.Options{})
			got, err := collect(c)
			if err != nil || got != "Hello" {
				t.Errorf("streamed %q, %v; want Hello", got, err)
			}
		})
	}

	t.Run("PiecesWithoutText", func(t *testing.T) {
		delta, _ := json.Marshal(wire.Chunk{ID: "r1", Object: wire.ChunkObject, Choices: []wire.ChunkChoice{{
			Delta: wire.ChunkDelta{ToolCall: &wire.ToolCallDelta{ID: "call_1", Name: "f", Arguments: "{}"}}}}})
		last, _ := json.Marshal(wire.Chunk{ID: "r1", Object: wire.ChunkObject, Choices: []wire.ChunkChoice{{
			FinishReason: "stop"}}, Usage: &wire.Usage{InputTokens: 1, OutputTokens: 1}})
		c := mustClient(t, sse([]string{"Hel", "lo"}, false, "data: "+string(delta)+"\n\ndata: "+string(last)+
			"\n\ndata: [DONE]\n\n"), client.Options{})
		var pieces []string
		err := c.CompleteStream(ctx, req, func(s string) error { pieces = append(pieces, s); return nil })
		if err != nil || strings.Join(pieces, "|") != "Hel|lo" {
			t.Errorf("streamed %q, %v; want the two pieces of text alone", pieces, err)
		}
	})

	t.Run("ErrorEvent", func(t *testing.T) {
		body, _ := json.Marshal(wire.ErrorBody{Code: wire.CodeProvider, Message: "The model failed.", RequestID: "req-2"})
		c := mustClient(t, sse([]string{"Hel"}, false, "event: error\ndata: "+string(body)+"\n\n"), client.Options{})
		got, err := collect(c)
		var e *client.Error
		if !errors.As(err, &e) || e.Code != wire.CodeProvider || e.RequestID != "req-2" {
			t.Fatalf("err = %v, want the stream's error event", err)
		}
		if got != "Hel" {
			t.Errorf("streamed %q before the error, want Hel", got)
		}
	})

	t.Run("Accepted", func(t *testing.T) {
		c := mustClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(wire.Accepted{ID: "run1", Object: wire.WorkflowRunObject,
				Status: wire.WorkflowWaitingForReview, ExecutionID: "run1"})
		}), client.Options{})
		_, err := collect(c)
		var acc *client.AcceptedError
		if !errors.As(err, &acc) || acc.Accepted.ID != "run1" || acc.Accepted.Status != wire.WorkflowWaitingForReview {
			t.Errorf("err = %v, want the paused run", err)
		}
	})

	t.Run("SendsStream", func(t *testing.T) {
		var body []byte
		var accept string
		c := mustClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ = io.ReadAll(r.Body)
			accept = r.Header.Get("Accept")
			sse(nil, false, "data: [DONE]\n\n")(w, r)
		}), client.Options{})
		if _, err := collect(c); err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, body, []byte(`{"canvas_id":"c1","stream":true}`)) {
			t.Errorf("body = %s", body)
		}
		if accept != "text/event-stream" {
			t.Errorf("Accept = %q", accept)
		}
	})
}
