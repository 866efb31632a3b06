package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/anthropic"
	"github.com/promptcanvas/promptcanvas/server"
)

// TestRun runs the example against a real server whose anthropic
// credentials reach a fake Anthropic API speaking the Messages API: the
// key the example stores is the one Anthropic receives, and the answer
// comes back with its cost from the price catalogue.
func TestRun(t *testing.T) {
	var (
		mu   sync.Mutex
		keys []string
		body map[string]any
	)
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		_ = json.Unmarshal(raw, &body)
		mu.Unlock()
		if r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
			"content":[{"type":"text","text":"Hi Ada, lovely to meet!"}],"stop_reason":"end_turn",
			"usage":{"input_tokens":1000,"output_tokens":2000}}`)
	}))
	defer vendor.Close()

	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{
		ProviderKinds: model.Kinds{canvas.ProviderAnthropic: anthropic.Factory}})
	require.NoError(t, err)
	defer eng.Close()
	token := uuid.NewString()
	_, _, err = eng.Bootstrap(ctx, token)
	require.NoError(t, err)
	h, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: eng.Store, Changes: eng.Changes})})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, config{URL: srv.URL, Key: token, AnthropicKey: "sk-ant-example-4k2Q",
		AnthropicURL: vendor.URL}))
	assert.Equal(t, `credential claude (anthropic, key …4k2Q)
claude-sonnet-4-5-20250929: Hi Ada, lovely to meet!
cost: $0.033000 (1000 tokens in, 2000 out)
`, out.String())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"sk-ant-example-4k2Q"}, keys, "the stored key is the one Anthropic receives")
	assert.Equal(t, "claude-sonnet-4-5", body["model"])
}
