package bedrock_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"
)

// fakeBedrock is an httptest server speaking Bedrock Runtime's wire format:
// POST /model/{modelId}/converse answers a JSON ConverseResponse, and
// POST /model/{modelId}/converse-stream an application/vnd.amazon.eventstream
// body of binary frames (messageStart, contentBlockStart,
// contentBlockDelta, contentBlockStop, messageStop, metadata). Errors are
// answered as Bedrock does: the status, X-Amzn-ErrorType and a JSON
// {"message"}; an exception inside a stream is a frame of :message-type
// "exception". It records every request.
type fakeBedrock struct {
	// Blocks is the answer's content.
	Blocks []block
	// StopReason is the answer's stopReason; default "end_turn", or
	// "tool_use" when a block is a tool use.
	StopReason string
	// Fail lists errors to answer with, in order, before succeeding.
	Fail []vendorError
	// StreamException sends an exception frame of this type (e.g.
	// "throttlingException") after the first streamed delta.
	StreamException string
	// Hang blocks every request (after the first delta when streaming)
	// until the client goes away.
	Hang bool

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	requests []recorded
}

// block is one content block of an answer: text streamed in pieces, or a
// tool use whose input JSON is streamed in pieces.
type block struct {
	Text      []string
	ToolUseID string
	Name      string
	Input     []string
}

// vendorError is an error answer: status, exception type, Retry-After.
type vendorError struct {
	Status     int
	Type       string
	RetryAfter string
}

// recorded is a request the SDK sent.
type recorded struct {
	Method  string
	Path    string // as sent, escaped
	ModelID string
	Header  http.Header
	Body    map[string]any
}

// Usage the fake reports for every answer.
const (
	fakeInputTokens  = 11
	fakeOutputTokens = 7
)

// newFakeBedrock starts f over plain HTTP (tls false) or HTTPS.
func newFakeBedrock(t *testing.T, f *fakeBedrock, tls bool) *fakeBedrock {
	t.Helper()
	f.release = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /model/{modelId}/converse", func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, false) })
	mux.HandleFunc("POST /model/{modelId}/converse-stream", func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, true) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeBedrockError(w, vendorError{Status: http.StatusNotFound, Type: "UnknownOperationException"})
	})
	if tls {
		f.srv = httptest.NewTLSServer(mux)
	} else {
		f.srv = httptest.NewServer(mux)
	}
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: unblocks hung handlers
	return f
}

// URL is the fake's base URL (the credential's BaseURL).
func (f *fakeBedrock) URL() string { return f.srv.URL }

// Requests returns every request received.
func (f *fakeBedrock) Requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func (f *fakeBedrock) serve(w http.ResponseWriter, r *http.Request, stream bool) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeBedrockError(w, vendorError{Status: http.StatusBadRequest, Type: "ValidationException"})
		return
	}
	f.mu.Lock()
	attempt := len(f.requests)
	f.requests = append(f.requests, recorded{Method: r.Method, Path: r.URL.EscapedPath(),
		ModelID: r.PathValue("modelId"), Header: r.Header.Clone(), Body: body})
	f.mu.Unlock()

	if attempt < len(f.Fail) {
		writeBedrockError(w, f.Fail[attempt])
		return
	}
	if stream {
		f.stream(w, r)
		return
	}
	if f.Hang {
		f.wait(r)
		return
	}
	content := []any{}
	for _, b := range f.Blocks {
		if b.Name == "" {
			content = append(content, map[string]any{"text": strings.Join(b.Text, "")})
			continue
		}
		var input any = map[string]any{}
		if s := strings.Join(b.Input, ""); s != "" {
			if err := json.Unmarshal([]byte(s), &input); err != nil {
				panic(err)
			}
		}
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": b.ToolUseID, "name": b.Name, "input": input}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "req-1")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": f.stopReason(),
		"usage":      map[string]any{"inputTokens": fakeInputTokens, "outputTokens": fakeOutputTokens, "totalTokens": fakeInputTokens + fakeOutputTokens},
		"metrics":    map[string]any{"latencyMs": 42},
	})
}

// stream writes the answer as event stream frames, as ConverseStream does:
// a toolUse block starts with contentBlockStart; text blocks start with
// their first delta. Every event carries Bedrock's "p" padding member.
func (f *fakeBedrock) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("X-Amzn-Requestid", "req-1")
	flusher := w.(http.Flusher)
	enc := eventstream.NewEncoder()
	frame := func(headers eventstream.Headers, payload any) {
		b, err := json.Marshal(payload)
		if err != nil {
			panic(err)
		}
		if err := enc.Encode(w, eventstream.Message{Headers: headers, Payload: b}); err != nil {
			panic(err)
		}
		flusher.Flush()
	}
	event := func(typ string, payload map[string]any) {
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(typ))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		payload["p"] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
		frame(h, payload)
	}
	event("messageStart", map[string]any{"role": "assistant"})
	first := true
	for i, b := range f.Blocks {
		pieces := b.Text
		if b.Name != "" {
			event("contentBlockStart", map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]any{"toolUseId": b.ToolUseID, "name": b.Name}}})
			pieces = b.Input
		}
		for _, piece := range pieces {
			delta := map[string]any{"text": piece}
			if b.Name != "" {
				delta = map[string]any{"toolUse": map[string]any{"input": piece}}
			}
			event("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": delta})
			if first && f.StreamException != "" {
				var h eventstream.Headers
				h.Set(":exception-type", eventstream.StringValue(f.StreamException))
				h.Set(":content-type", eventstream.StringValue("application/json"))
				h.Set(":message-type", eventstream.StringValue("exception"))
				frame(h, map[string]any{"message": "slow down (secret detail)"})
				return
			}
			if first && f.Hang {
				f.wait(r)
				return
			}
			first = false
		}
		event("contentBlockStop", map[string]any{"contentBlockIndex": i})
	}
	event("messageStop", map[string]any{"stopReason": f.stopReason()})
	event("metadata", map[string]any{
		"usage":   map[string]any{"inputTokens": fakeInputTokens, "outputTokens": fakeOutputTokens, "totalTokens": fakeInputTokens + fakeOutputTokens},
		"metrics": map[string]any{"latencyMs": 42},
	})
}

func (f *fakeBedrock) stopReason() string {
	if f.StopReason != "" {
		return f.StopReason
	}
	for _, b := range f.Blocks {
		if b.Name != "" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// wait blocks until the client goes away or the test ends.
func (f *fakeBedrock) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

// writeBedrockError answers as Bedrock does: X-Amzn-ErrorType names the
// exception, the body holds its message.
func writeBedrockError(w http.ResponseWriter, e vendorError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", e.Type+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-Requestid", "req-err")
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": "upstream says " + strconv.Itoa(e.Status) + " (secret detail)"})
}

// mustJSON decodes s into a generic value for comparing request bodies.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}
