package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/queue"
)

// postJSON sends body to the daemon and returns the status and the decoded
// answer.
func (d *daemon) postJSON(t *testing.T, path, token string, body any, headers ...string) (int, map[string]any) {
	t.Helper()
	return d.sendJSON(t, http.MethodPost, path, token, body, headers...)
}

// sendJSON sends body (none when nil) with method and headers to the
// daemon and returns the status and the decoded answer.
func (d *daemon) sendJSON(t *testing.T, method, path, token string, body any, headers ...string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, d.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out), "body: %s", b)
	return resp.StatusCode, out
}

// TestRun_Completions runs canvasd with an OpenAI-compatible back end and
// checks the wiring: echo and the back end both serve models, and the queue
// worker runs async completions and delivers their webhooks.
func TestRun_Completions(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m",
			"choices":[{"index":0,"message":{"role":"assistant","content":"from the back end"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(backend.Close)
	hooks := make(chan map[string]any, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		ev["tenant"] = r.Header.Get("Tenant")
		hooks <- ev
	}))
	t.Cleanup(receiver.Close)

	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, map[string]string{
		"CANVAS_BOOTSTRAP_API_KEY":      key,
		"CANVAS_OPENAI_BASE_URL":        backend.URL + "/v1",
		"CANVAS_ALLOW_PRIVATE_NETWORKS": "1",
	})
	status, project := d.postJSON(t, "/projects", key, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status)
	status, c := d.postJSON(t, "/prompt", key, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status)
	status, v := d.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Hi {{who}}"}})
	require.Equal(t, http.StatusCreated, status)
	status, _ = d.postJSON(t, "/environment/publish", key, map[string]any{"resourceType": "prompt",
		"resourceId": c["id"], "envName": "production", "versionId": v["id"]})
	require.Equal(t, http.StatusCreated, status)

	text := func(resp map[string]any) string {
		return resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(map[string]any)["text"].(string)
	}
	body := map[string]any{"canvas_id": c["id"], "variables": map[string]any{"who": "Ada"}}
	status, got := d.postJSON(t, "/v2/chat/completions", key, body)
	require.Equal(t, http.StatusOK, status, "%v", got)
	assert.Equal(t, "Hi Ada", text(got))

	body["settings"] = map[string]any{"model": "llama3"}
	status, got = d.postJSON(t, "/v2/chat/completions", key, body)
	require.Equal(t, http.StatusOK, status, "%v", got)
	assert.Equal(t, "from the back end", text(got))

	delete(body, "settings")
	body["webhook_url"] = receiver.URL
	status, got = d.postJSON(t, "/v2/chat/completions", key, body, "X-Svc-Forward-Tenant", "acme")
	require.Equal(t, http.StatusAccepted, status, "%v", got)
	select {
	case ev := <-hooks:
		assert.Equal(t, "completion.succeeded", ev["type"])
		assert.Equal(t, "acme", ev["tenant"])
		assert.Equal(t, got["id"], ev["data"].(map[string]any)["id"])
	case <-time.After(waitLimit):
		require.FailNow(t, "no webhook notification")
	}
	require.NoError(t, d.stop())
}

func TestWorkerConfig_Flags(t *testing.T) {
	parse := parseServe
	c, err := parse(nil)
	require.NoError(t, err)
	assert.Equal(t, queue.DefaultModelConcurrency, c.WorkerConcurrency)
	assert.Equal(t, queue.DefaultDeliveryConcurrency, c.DeliveryConcurrency)
	for _, lane := range []struct {
		env, flag string
		get       func(config) int
	}{
		{"CANVAS_WORKER_CONCURRENCY", "--worker-concurrency", func(c config) int { return c.WorkerConcurrency }},
		{"CANVAS_DELIVERY_CONCURRENCY", "--delivery-concurrency", func(c config) int { return c.DeliveryConcurrency }},
	} {
		c, err = parse(map[string]string{lane.env: "32"})
		require.NoError(t, err)
		assert.Equal(t, 32, lane.get(c), lane.env)
		c, err = parse(map[string]string{lane.env: "32"}, lane.flag, "2")
		require.NoError(t, err)
		assert.Equal(t, 2, lane.get(c), "%s: the flag wins", lane.flag)
		for _, v := range []string{"many", "0", "-3"} {
			_, err := parse(map[string]string{lane.env: v})
			assert.Error(t, err, "%s=%s", lane.env, v)
		}
	}
	opts, err := engineOptions(c, nil)
	require.NoError(t, err)
	assert.Equal(t, c.WorkerConcurrency, opts.Limits.ModelConcurrency)
	assert.Equal(t, c.DeliveryConcurrency, opts.Limits.DeliveryConcurrency)
}
