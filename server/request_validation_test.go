package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// requireInvalidAt checks a 422 VALIDATION answer with one detail at path.
func requireInvalidAt(t *testing.T, r *testResponse, path string) {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	b := readError(t, r)
	assert.Equal(t, canvas.EINVALID, b.Code)
	require.Len(t, b.Details, 1, "%s", r.Body)
	assert.Equal(t, path, b.Details[0].Path)
}

// TestRequestValidation_WebhookURL checks that a per-request webhook URL
// without a host is refused when the request arrives, as an application's
// subscription URL is, instead of being accepted and failing every
// delivery.
func TestRequestValidation_WebhookURL(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	for _, url := range []string{"http://", "http:///x", "https://", "http://:80/x"} {
		t.Run(url, func(t *testing.T) {
			requireInvalidAt(t, e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{
				"canvas_id": w.Canvas, "variables": map[string]any{"name": "Ada"}, "webhook_url": url}), "/json/webhook_url")
			requireInvalidAt(t, e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{
				"prompt": "Hi", "webhook_url": url}), "/json/webhook_url")
		})
	}
	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi", "webhook_url": "https://example.com/hook"})
		assert.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	})
}

// TestRequestValidation_IdempotencyKey checks that an Idempotency-Key sent
// blank is refused, not taken for a request without the header (which
// would run a retry twice).
func TestRequestValidation_IdempotencyKey(t *testing.T) {
	e := newFullEnv(t)
	for _, key := range []string{"", "   "} {
		r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi"}, "Idempotency-Key", key)
		requireInvalidAt(t, r, "/header/Idempotency-Key")
	}
	r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi"}, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	again := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hi"}, "Idempotency-Key", "k-1")
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
}

// TestRequestValidation_UTF8 checks that text that is not valid UTF-8 (raw
// bytes, or an escaped lone surrogate) is refused at its JSON pointer
// instead of being silently replaced with U+FFFD.
func TestRequestValidation_UTF8(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	for _, tt := range []struct {
		name, method, path, body, at string
	}{
		{"RawByte", "POST", "/prompt", `{"title":"caf` + "\xe9" + `"}`, "/json/title"},
		{"Truncated", "POST", "/prompt", `{"title":"` + "\xe2\x82" + `"}`, "/json/title"},
		{"LoneHighSurrogate", "POST", "/prompt", `{"title":"a\ud800b"}`, "/json/title"},
		{"LoneLowSurrogate", "POST", "/prompt", `{"title":"\uDC00"}`, "/json/title"},
		{"Key", "POST", "/test-case", `{"promptId":"` + w.Canvas + `","variables":{"n` + "\xff" + `":"v"}}`, "/json/variables/n\ufffd"},
		{"InArray", "PATCH", "/prompt/" + w.Canvas, `{"customTags":["ok","` + "\xc0\xaf" + `"]}`, "/json/customTags/1"},
		{"Nested", "POST", "/v2/chat/completions", `{"canvas_id":"` + w.Canvas + `","variables":{"name":{"deep":["\ud83d"]}}}`, "/json/variables/name/deep/0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			requireInvalidAt(t, e.Do(tt.method, tt.path, e.Editor, []byte(tt.body)), tt.at)
		})
	}
	t.Run("ValidText", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/prompt", e.Editor, []byte(`{"projectId":"`+w.P1+`","title":"caf\u00e9 \ud83d\ude00 \\ud800 `+"\xe2\x82\xac"+`"}`))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		assert.True(t, strings.HasPrefix(r.Map(t)["title"].(string), "café 😀 \\ud800 €"))
	})
}
