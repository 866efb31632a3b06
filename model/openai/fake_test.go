package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeOpenAI is an httptest server speaking OpenAI's chat completions wire
// format: a JSON chat.completion, or with "stream": true
// chat.completion.chunk server-sent events ending in "data: [DONE]", with a
// final usage chunk when stream_options.include_usage is set. It answers
// POST .../chat/completions under any root (Azure's
// /openai/deployments/{name} included) and records every request.
type fakeOpenAI struct {
	// Chunks is the answer's text, one streamed delta per element.
	Chunks []string
	// Calls are the tool calls of the answer, streamed after the text with
	// their arguments in the pieces given.
	Calls []fakeCall
	// Fail lists statuses to answer with, in order, before succeeding; an
	// error body {"error": {"message", "type", "code"}} goes with each, and
	// a 429 says Retry-After: 7.
	Fail []int
	// StreamError sends an error event after the first streamed chunk.
	StreamError bool
	// Hang blocks every request (after the first chunk when streaming) until
	// the client goes away.
	Hang bool
	// TLS serves HTTPS; Client then trusts the server's certificate.
	TLS bool

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	urls     []*url.URL
	attempts int
}

// fakeCall is a tool call the fake answers with.
type fakeCall struct {
	ID, Name string
	// Args are the pieces of the arguments' JSON text.
	Args []string
}

// newFakeOpenAI starts a fake and returns it with its base URL: the root
// followed by /v1.
func newFakeOpenAI(t *testing.T, f *fakeOpenAI) (*fakeOpenAI, string) {
	t.Helper()
	f.release = make(chan struct{})
	if f.TLS {
		f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	} else {
		f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	}
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: unblocks hung handlers
	return f, f.srv.URL + "/v1"
}

// Root returns the server's URL without a path.
func (f *fakeOpenAI) Root() string { return f.srv.URL }

// Client returns a client that trusts the server.
func (f *fakeOpenAI) Client() *http.Client { return f.srv.Client() }

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

// URL returns the URL (path and query) of request i.
func (f *fakeOpenAI) URL(i int) *url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.urls[i]
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
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
	u := *r.URL
	f.urls = append(f.urls, &u)
	attempt := f.attempts
	f.attempts++
	f.mu.Unlock()

	if attempt < len(f.Fail) {
		status := f.Fail[attempt]
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "7")
		} else {
			w.Header().Set("retry-after-ms", "1")
		}
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
	message := map[string]any{"role": "assistant", "content": strings.Join(f.Chunks, ""), "refusal": nil}
	if len(f.Chunks) == 0 {
		message["content"] = nil
	}
	if len(f.Calls) > 0 {
		var calls []any
		for _, c := range f.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Args, "")}})
		}
		message["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model + "-2025",
		"choices": []any{map[string]any{"index": 0, "finish_reason": f.finishReason(), "logprobs": nil, "message": message}},
		"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": f.outputTokens(), "total_tokens": 11 + f.outputTokens()},
	})
}

func (f *fakeOpenAI) finishReason() string {
	if len(f.Calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// outputTokens counts the answer's streamed pieces.
func (f *fakeOpenAI) outputTokens() int {
	n := len(f.Chunks)
	for _, c := range f.Calls {
		n += len(c.Args)
	}
	return n
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
			"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model + "-2025",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
		if usage {
			c["usage"] = nil
		}
		return c
	}
	if len(f.Chunks) > 0 || len(f.Calls) == 0 {
		send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
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
	for i, c := range f.Calls {
		// The first delta of a call carries its id, type and name, with
		// the role when it opens the answer; the others carry arguments.
		first := map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}
		if i == 0 && len(f.Chunks) == 0 {
			first["role"], first["content"] = "assistant", nil
		}
		send(chunk(first, nil))
		for _, piece := range c.Args {
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": piece}}}}, nil))
		}
	}
	send(chunk(map[string]any{}, f.finishReason()))
	if usage {
		send(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model + "-2025",
			"choices": []any{},
			"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": f.outputTokens(), "total_tokens": 11 + f.outputTokens()},
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
