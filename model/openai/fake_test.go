package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeOpenAI is an httptest server speaking OpenAI's chat completions wire
// format: a JSON chat.completion, or with "stream": true chat.model.chunk
// server-sent events ending in "data: [DONE]", with a final usage chunk when
// stream_options.include_usage is set. It records every request.
type fakeOpenAI struct {
	// Chunks is the answer, one streamed delta per element.
	Chunks []string
	// Fail lists statuses to answer with, in order, before succeeding; an
	// error body {"error": {"message", "type", "code"}} goes with each.
	Fail []int
	// StreamError sends an error event after the first streamed chunk.
	StreamError bool
	// Hang blocks every request (after the first chunk when streaming) until
	// the client goes away.
	Hang bool

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	attempts int
}

// newFakeOpenAI starts a fake and returns it with its base URL.
func newFakeOpenAI(t *testing.T, f *fakeOpenAI) (*fakeOpenAI, string) {
	t.Helper()
	f.release = make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: unblocks hung handlers
	return f, f.srv.URL + "/v1"
}

// Requests returns the decoded bodies of every request received.
func (f *fakeOpenAI) Requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// Header returns the headers of request i.
func (f *fakeOpenAI) Header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "unknown_url")
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json")
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	attempt := f.attempts
	f.attempts++
	f.mu.Unlock()

	if attempt < len(f.Fail) {
		status := f.Fail[attempt]
		w.Header().Set("retry-after-ms", "1")
		writeOpenAIError(w, status, map[int]string{401: "invalid_request_error", 429: "requests", 500: "server_error"}[status], map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded"}[status])
		return
	}
	model, _ := body["model"].(string)
	if stream, _ := body["stream"].(bool); stream {
		opts, _ := body["stream_options"].(map[string]any)
		usage, _ := opts["include_usage"].(bool)
		f.stream(w, r, model, usage)
		return
	}
	if f.Hang {
		f.wait(r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model + "-2025",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": strings.Join(f.Chunks, ""), "refusal": nil},
		}},
		"usage": map[string]any{"prompt_tokens": 11, "completion_tokens": len(f.Chunks), "total_tokens": 11 + len(f.Chunks)},
	})
}

func (f *fakeOpenAI) stream(w http.ResponseWriter, r *http.Request, model string, usage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{
			"id": "chatcmpl-1", "object": "chat.model.chunk", "created": 1700000000, "model": model + "-2025",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
		if usage {
			c["usage"] = nil
		}
		return c
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, c := range f.Chunks {
		send(chunk(map[string]any{"content": c}, nil))
		if f.StreamError {
			send(map[string]any{"error": map[string]any{"message": "overloaded (secret detail)", "type": "server_error"}})
			return
		}
		if f.Hang {
			f.wait(r)
			return
		}
	}
	send(chunk(map[string]any{}, "stop"))
	if usage {
		send(map[string]any{
			"id": "chatcmpl-1", "object": "chat.model.chunk", "created": 1700000000, "model": model + "-2025",
			"choices": []any{},
			"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": len(f.Chunks), "total_tokens": 11 + len(f.Chunks)},
		})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// wait blocks until the client goes away or the test ends.
func (f *fakeOpenAI) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

func writeOpenAIError(w http.ResponseWriter, status int, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("upstream says %d (secret detail)", status), "type": typ, "code": code, "param": nil,
	}})
}

// mustJSON decodes s into a generic value for comparing request bodies.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}
