package server_test

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

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// fakeVendor is an httptest server speaking one model vendor's wire
// format, as the vendor's own SDK parses it: the OpenAI chat completions
// API (also under Azure's /openai/deployments/{name}), Anthropic's
// Messages API, Gemini's generateContent, or Bedrock's Converse and
// ConverseStream (the AWS event-stream framing). Each answers JSON, or a
// stream when the request asks for one. What it answers depends on the
// request (vendorAnswer): a call of a declared function, structured
// output, or text. It records every request.
type fakeVendor struct {
	kind string
	srv  *httptest.Server
	// refuse answers every request 401 with an error whose message quotes
	// the key received, as vendors do for a key they do not know.
	refuse bool

	mu   sync.Mutex
	reqs []vendorRequest
}

// vendorRequest is a request the vendor received.
type vendorRequest struct {
	Path   string
	Query  url.Values
	Header http.Header
	Body   map[string]any
}

// Vendor wire formats.
const (
	wireOpenAI    = "openai"
	wireAnthropic = "anthropic"
	wireGemini    = "gemini"
	wireBedrock   = "bedrock"
)

// Usage every fake reports.
const (
	fakeIn  = 11
	fakeOut = 7
)

// newFakeVendor starts a fake speaking wire, over HTTPS when tls is set
// (its certificate is httptest's, which the test's providers trust).
func newFakeVendor(t *testing.T, wire string, tls bool) *fakeVendor {
	t.Helper()
	f := &fakeVendor{kind: wire}
	if tls {
		f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	} else {
		f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	}
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the server's root.
func (f *fakeVendor) URL() string { return f.srv.URL }

// Requests returns the requests received so far.
func (f *fakeVendor) Requests() []vendorRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]vendorRequest(nil), f.reqs...)
}

// Last returns the last request received.
func (f *fakeVendor) Last(t *testing.T) vendorRequest {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatalf("the %s vendor received no request", f.kind)
	}
	return reqs[len(reqs)-1]
}

// vendorAnswer is what a fake answers: text in pieces, or a call of Tool
// with Input.
type vendorAnswer struct {
	Text  []string
	Tool  string
	Input string
}

// Answers of the fakes.
const (
	fakeArgs       = `{"city":"Paris"}`
	fakeStructured = `{"answer":"42"}`
)

// outputTool is the tool through which Anthropic and Bedrock give
// structured output.
const outputTool = "output"

// answer decides the answer to body: a call of the first declared
// function, else the structured output (as text, or as the input of the
// output tool where the vendor gives it through a tool), else a greeting.
func (f *fakeVendor) answer(body map[string]any) vendorAnswer {
	var names []string
	structured := false
	switch f.kind {
	case wireOpenAI:
		for _, tool := range list(body["tools"]) {
			names = append(names, str(obj(obj(tool)["function"])["name"]))
		}
		structured = str(obj(body["response_format"])["type"]) == "json_schema"
	case wireAnthropic:
		for _, tool := range list(body["tools"]) {
			names = append(names, str(obj(tool)["name"]))
		}
	case wireGemini:
		for _, tool := range list(body["tools"]) {
			for _, fn := range list(obj(tool)["functionDeclarations"]) {
				names = append(names, str(obj(fn)["name"]))
			}
		}
		structured = obj(body["generationConfig"])["responseJsonSchema"] != nil
	case wireBedrock:
		for _, tool := range list(obj(body["toolConfig"])["tools"]) {
			names = append(names, str(obj(obj(tool)["toolSpec"])["name"]))
		}
	}
	for _, n := range names {
		if n != outputTool {
			return vendorAnswer{Tool: n, Input: fakeArgs}
		}
	}
	switch {
	case structured:
		return vendorAnswer{Text: []string{`{"answer":`, `"42"}`}}
	case len(names) > 0:
		return vendorAnswer{Tool: outputTool, Input: fakeStructured}
	}
	return vendorAnswer{Text: []string{"Hello ", "from " + f.kind}}
}

// Joined returns the answer's text.
func (a vendorAnswer) Joined() string { return strings.Join(a.Text, "") }

func (f *fakeVendor) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if r.Method != http.MethodPost || json.Unmarshal(raw, &body) != nil {
		http.Error(w, "not a request of this API", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, vendorRequest{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	f.mu.Unlock()
	if f.refuse {
		f.refuseKey(w, r)
		return
	}
	a := f.answer(body)
	switch f.kind {
	case wireOpenAI:
		f.openAI(w, body, a)
	case wireAnthropic:
		f.anthropic(w, body, a)
	case wireGemini:
		f.gemini(w, strings.HasSuffix(r.URL.Path, ":streamGenerateContent"), a)
	case wireBedrock:
		f.bedrock(w, strings.HasSuffix(r.URL.Path, "/converse-stream"), a)
	}
}

// refuseKey answers 401 with an error body that every vendor's SDK reads
// (OpenAI's and Gemini's {"error": {...}}, Anthropic's {"type": "error"},
// Bedrock's {"message"} with its X-Amzn-ErrorType), each message quoting
// the key the request carried.
func (f *fakeVendor) refuseKey(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key") + r.Header.Get("Api-Key") +
		strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	msg := "Incorrect API key provided: " + key + "."
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/")
	w.WriteHeader(http.StatusUnauthorized)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "message": msg, "error": map[string]any{
		"type": "authentication_error", "code": "invalid_api_key", "status": "UNAUTHENTICATED", "message": msg}})
}

// writeSSE writes one server-sent event (no event name when event is "").
func writeSSE(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

func (f *fakeVendor) openAI(w http.ResponseWriter, body map[string]any, a vendorAnswer) {
	model := str(body["model"])
	if model == "" {
		model = "gpt-4o-mini" // Azure names the deployment in the path
	}
	finish := "stop"
	var calls []any
	if a.Tool != "" {
		finish = "tool_calls"
		calls = []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": a.Tool, "arguments": a.Input}}}
	}
	usage := map[string]any{"prompt_tokens": fakeIn, "completion_tokens": fakeOut, "total_tokens": fakeIn + fakeOut}
	if stream, _ := body["stream"].(bool); !stream {
		msg := map[string]any{"role": "assistant", "content": a.Joined(), "refusal": nil}
		if calls != nil {
			msg["content"], msg["tool_calls"] = nil, calls
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
			"model": model, "usage": usage,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	writeSSE(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, piece := range a.Text {
		writeSSE(w, "", chunk(map[string]any{"content": piece}, nil))
	}
	if a.Tool != "" {
		writeSSE(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": a.Tool, "arguments": ""}}}}, nil))
		for _, piece := range halves(a.Input) {
			writeSSE(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
				"function": map[string]any{"arguments": piece}}}}, nil))
		}
	}
	writeSSE(w, "", chunk(map[string]any{}, finish))
	writeSSE(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
		"choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (f *fakeVendor) anthropic(w http.ResponseWriter, body map[string]any, a vendorAnswer) {
	model := str(body["model"])
	stop := "end_turn"
	if a.Tool != "" {
		stop = "tool_use"
	}
	if stream, _ := body["stream"].(bool); !stream {
		content := []any{}
		if a.Tool != "" {
			var input any
			_ = json.Unmarshal([]byte(a.Input), &input)
			content = append(content, map[string]any{"type": "tool_use", "id": "toolu_1", "name": a.Tool, "input": input})
		} else {
			content = append(content, map[string]any{"type": "text", "text": a.Joined(), "citations": nil})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": fakeIn, "output_tokens": fakeOut}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, v map[string]any) {
		v["type"] = event
		writeSSE(w, event, v)
	}
	send("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": fakeIn, "output_tokens": 1}}})
	if a.Tool != "" {
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": "toolu_1", "name": a.Tool, "input": map[string]any{}}})
		for _, piece := range halves(a.Input) {
			send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
	} else {
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, piece := range a.Text {
			send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": piece}})
		}
	}
	send("content_block_stop", map[string]any{"index": 0})
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": fakeOut}})
	send("message_stop", map[string]any{})
}

func (f *fakeVendor) gemini(w http.ResponseWriter, stream bool, a vendorAnswer) {
	parts := []any{}
	if a.Tool != "" {
		var args any
		_ = json.Unmarshal([]byte(a.Input), &args)
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": a.Tool, "args": args}})
	} else {
		for _, piece := range a.Text {
			parts = append(parts, map[string]any{"text": piece})
		}
	}
	response := func(parts []any, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if last {
			cand["finishReason"] = "STOP"
		}
		return map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-flash-001", "responseId": "resp-1",
			"usageMetadata": map[string]any{"promptTokenCount": fakeIn, "candidatesTokenCount": fakeOut, "totalTokenCount": fakeIn + fakeOut}}
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(response(parts, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, p := range parts {
		writeSSE(w, "", response([]any{p}, i == len(parts)-1))
	}
}

func (f *fakeVendor) bedrock(w http.ResponseWriter, stream bool, a vendorAnswer) {
	stop := "end_turn"
	if a.Tool != "" {
		stop = "tool_use"
	}
	usage := map[string]any{"inputTokens": fakeIn, "outputTokens": fakeOut, "totalTokens": fakeIn + fakeOut}
	if !stream {
		var content []any
		if a.Tool != "" {
			var input any
			_ = json.Unmarshal([]byte(a.Input), &input)
			content = []any{map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_1", "name": a.Tool, "input": input}}}
		} else {
			content = []any{map[string]any{"text": a.Joined()}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"stopReason": stop, "usage": usage, "metrics": map[string]any{"latencyMs": 42},
			"output": map[string]any{"message": map[string]any{"role": "assistant", "content": content}}})
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	enc := eventstream.NewEncoder()
	event := func(typ string, payload map[string]any) {
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(typ))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		b, _ := json.Marshal(payload)
		_ = enc.Encode(w, eventstream.Message{Headers: h, Payload: b})
		w.(http.Flusher).Flush()
	}
	event("messageStart", map[string]any{"role": "assistant"})
	if a.Tool != "" {
		event("contentBlockStart", map[string]any{"contentBlockIndex": 0,
			"start": map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_1", "name": a.Tool}}})
		for _, piece := range halves(a.Input) {
			event("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"toolUse": map[string]any{"input": piece}}})
		}
	} else {
		for _, piece := range a.Text {
			event("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": piece}})
		}
	}
	event("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	event("messageStop", map[string]any{"stopReason": stop})
	event("metadata", map[string]any{"usage": usage, "metrics": map[string]any{"latencyMs": 42}})
}

// halves splits s in two, as a stream sends a call's arguments in pieces.
func halves(s string) []string { return []string{s[:len(s)/2], s[len(s)/2:]} }

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
