package gemini_test

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGemini is an httptest server speaking the generateContent wire
// format of the Gemini API and Vertex AI: POST
// .../models/{model}:generateContent answers one JSON
// GenerateContentResponse, and :streamGenerateContent?alt=sse answers
// "data: " events of one response each, the last with the finish reason.
// Every chunk carries the running usage, as Gemini's do. POST /token is an
// OAuth token endpoint for service-account keys. It records every request.
type fakeGemini struct {
	// Parts are the answer's parts (JSON objects), one streamed chunk each.
	Parts []string
	// Finish is the finish reason; default "STOP".
	Finish string
	// Fail lists statuses to answer with, in order, before succeeding, with
	// a google.rpc.Status error body.
	Fail []int
	// RetryAfter is sent as the Retry-After header of a failure.
	RetryAfter string
	// RetryDelay adds a google.rpc.RetryInfo detail to a failure's body.
	RetryDelay string
	// PlainError answers failures with a text body instead of JSON.
	PlainError bool
	// StreamError sends an error event after the first streamed chunk.
	StreamError bool
	// Hang blocks every request (after the first chunk when streaming)
	// until the client goes away.
	Hang bool

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	requests []recorded
	tokens   []url.Values
	attempts int
}

// recorded is one generateContent request as the SDK sent it.
type recorded struct {
	Path   string
	Query  url.Values
	Header http.Header
	Body   map[string]any
}

// newFake starts f and returns it with its base URL.
func newFake(t *testing.T, f *fakeGemini) (*fakeGemini, string) {
	t.Helper()
	f.release = make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs first: unblocks hung handlers
	return f, f.srv.URL
}

// Requests returns every generateContent request received.
func (f *fakeGemini) Requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// Tokens returns the forms of every token request received.
func (f *fakeGemini) Tokens() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.tokens...)
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/token" {
		f.token(w, r)
		return
	}
	stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !stream && !strings.HasSuffix(r.URL.Path, ":generateContent") {
		f.fail(w, http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.fail(w, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, recorded{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	attempt := f.attempts
	f.attempts++
	f.mu.Unlock()

	if attempt < len(f.Fail) {
		f.fail(w, f.Fail[attempt])
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
	parts := make([]json.RawMessage, len(f.Parts))
	for i, p := range f.Parts {
		parts[i] = json.RawMessage(p)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(f.response(parts, len(f.Parts), true))
}

// response is one GenerateContentResponse holding parts, with the usage of
// the n parts answered so far.
func (f *fakeGemini) response(parts []json.RawMessage, n int, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if last {
		finish := f.Finish
		if finish == "" {
			finish = "STOP"
		}
		cand["finishReason"] = finish
	}
	return map[string]any{
		"candidates":    []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": 11, "candidatesTokenCount": n, "thoughtsTokenCount": 2, "totalTokenCount": 13 + n},
		"modelVersion":  "gemini-test-001",
		"responseId":    "resp-1",
	}
}

func (f *fakeGemini) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		flusher.Flush()
	}
	for i, p := range f.Parts {
		send(f.response([]json.RawMessage{json.RawMessage(p)}, i+1, i == len(f.Parts)-1))
		if f.StreamError {
			send(map[string]any{"error": map[string]any{"code": 503, "message": "overloaded (secret detail)", "status": "UNAVAILABLE"}})
			return
		}
		if f.Hang {
			f.wait(r)
			return
		}
	}
}

// fail answers status with Google's error body.
func (f *fakeGemini) fail(w http.ResponseWriter, status int) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.PlainError {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		fmt.Fprint(w, "upstream trouble (secret detail)")
		return
	}
	codes := map[int]string{400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
	details := []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TEST", "domain": "googleapis.com"}}
	if f.RetryDelay != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f.RetryDelay})
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "message": fmt.Sprintf("upstream says %d (secret detail)", status), "status": codes[status], "details": details,
	}})
}

// token answers an OAuth token request of the JWT-bearer grant.
func (f *fakeGemini) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.tokens = append(f.tokens, r.PostForm)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"access_token": "ya29.fake-token", "token_type": "Bearer", "expires_in": 3600}`)
}

// wait blocks until the client goes away or the test ends.
func (f *fakeGemini) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

// assertJSON asserts that v, marshalled, is the JSON want.
func assertJSON(t *testing.T, want string, v any) {
	t.Helper()
	got, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(got))
}
