package anthropic_test

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

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/anthropic"
)

// fakeAnthropic is an httptest server speaking the Messages API's wire
// format at POST /v1/messages: a JSON message, or with "stream": true the
// server-sent events message_start, content_block_start,
// content_block_delta (text_delta, input_json_delta), content_block_stop,
// message_delta and message_stop, with a ping among them. It records every
// request.
type fakeAnthropic struct {
	// Blocks is the answer's content, in order.
	Blocks []fakeBlock
	// StopReason is the answer's stop_reason; default "end_turn".
	StopReason string
	// Fail lists statuses to answer with, in order, before succeeding,
	// each with an error body of the type the API sends for it and a
	// retry-after header.
	Fail []int
	// StreamError sends an error event of this type after the first
	// streamed delta.
	StreamError string
	// Cut ends the stream after the first streamed delta, without
	// message_stop.
	Cut bool
	// Hang blocks every request (after the first delta when streaming)
	// until the client goes away.
	Hang bool

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	bodies   []map[string]any
	raws     []string
	headers  []http.Header
	paths    []string
	attempts int
}

// fakeBlock is one content block of an answer: text in streamed pieces,
// or a tool_use block (ToolName set) whose input is the concatenation of
// its streamed pieces.
type fakeBlock struct {
	Text     []string
	ToolID   string
	ToolName string
	Input    []string
}

// errorTypes are the error types the API documents for its statuses.
var errorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}

// newFake starts f and returns it with its base URL.
func newFake(t *testing.T, f *fakeAnthropic) (*fakeAnthropic, string) {
	t.Helper()
	f.release = make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: unblocks hung handlers
	return f, f.srv.URL
}

// Requests returns the decoded bodies of every request received.
func (f *fakeAnthropic) Requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// Header returns the headers of request i.
func (f *fakeAnthropic) Header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

// Raw returns the body of request i as sent.
func (f *fakeAnthropic) Raw(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.raws[i]
}

// Path returns the path of request i.
func (f *fakeAnthropic) Path(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[i]
}

func (f *fakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.raws = append(f.raws, string(raw))
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	attempt := f.attempts
	f.attempts++
	f.mu.Unlock()

	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		writeError(w, http.StatusNotFound)
		return
	case body == nil:
		writeError(w, http.StatusBadRequest)
		return
	case attempt < len(f.Fail):
		w.Header().Set("retry-after", "7")
		writeError(w, f.Fail[attempt])
		return
	}
	model, _ := body["model"].(string)
	if stream, _ := body["stream"].(bool); stream {
		f.stream(w, r, model)
		return
	}
	if f.Hang {
		f.wait(r)
		return
	}
	content := []any{}
	for _, b := range f.Blocks {
		if b.ToolName == "" {
			content = append(content, map[string]any{"type": "text", "text": strings.Join(b.Text, ""), "citations": nil})
			continue
		}
		var input any
		if err := json.Unmarshal([]byte(strings.Join(b.Input, "")), &input); err != nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{"type": "tool_use", "id": b.ToolID, "name": b.ToolName, "input": input})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_1")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": model + "-20260101",
		"content": content, "stop_reason": f.stopReason(), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 11, "output_tokens": 7, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3},
	})
}

func (f *fakeAnthropic) stopReason() string {
	if f.StopReason != "" {
		return f.StopReason
	}
	return "end_turn"
}

func (f *fakeAnthropic) stream(w http.ResponseWriter, r *http.Request, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("request-id", "req_1")
	flusher := w.(http.Flusher)
	send := func(event string, v map[string]any) {
		v["type"] = event
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		flusher.Flush()
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": model + "-20260101",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 11, "output_tokens": 1, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3},
	}})
	send("ping", map[string]any{})
	first := true
	delta := func(i int, d map[string]any) bool {
		send("content_block_delta", map[string]any{"index": i, "delta": d})
		if !first {
			return true
		}
		first = false
		switch {
		case f.StreamError != "":
			send("error", map[string]any{"error": map[string]any{"type": f.StreamError, "message": "Overloaded (secret detail)"}})
			return false
		case f.Cut:
			return false
		case f.Hang:
			f.wait(r)
			return false
		}
		return true
	}
	for i, b := range f.Blocks {
		if b.ToolName == "" {
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range b.Text {
				if !delta(i, map[string]any{"type": "text_delta", "text": piece}) {
					return
				}
			}
		} else {
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b.ToolID, "name": b.ToolName, "input": map[string]any{}}})
			for _, piece := range append([]string{""}, b.Input...) {
				if !delta(i, map[string]any{"type": "input_json_delta", "partial_json": piece}) {
					return
				}
			}
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": f.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 7}})
	send("message_stop", map[string]any{})
}

// wait blocks until the client goes away or the test ends.
func (f *fakeAnthropic) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

// writeError answers status with the API's error body.
func writeError(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "request_id": "req_1",
		"error": map[string]any{"type": errorTypes[status], "message": fmt.Sprintf("upstream says %d (secret detail)", status)}})
}

// testKey is the API key of the tests' credentials.
const testKey = "sk-ant-test-0123"

// mustProvider returns a provider of a credential whose base URL is url.
func mustProvider(t *testing.T, url string, edit ...func(*model.Credential)) *anthropic.Provider {
	t.Helper()
	c := model.Credential{ID: "cred-1", Name: "claude", Provider: canvas.ProviderAnthropic, APIKey: testKey, BaseURL: url,
		Settings: model.Settings{Headers: map[string]string{"X-Team": "canvas"}}}
	for _, e := range edit {
		e(&c)
	}
	p, err := anthropic.New(anthropic.Options{Credential: c})
	require.NoError(t, err)
	return p
}

// mustJSON decodes s into a generic value for comparing request bodies.
func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func ptr[T any](v T) *T { return &v }
