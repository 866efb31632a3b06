package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_Applications checks the wiring of applications: a publication
// (published, or promoted through a version update), a completion run with
// the application's id and a test case's generation all reach its
// subscription, signed with its secret.
func TestRun_Applications(t *testing.T) {
	t.Parallel()
	type received struct {
		header http.Header
		body   []byte
	}
	hooks := make(chan received, 5)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- received{r.Header.Clone(), b}
	}))
	t.Cleanup(receiver.Close)

	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, map[string]string{
		"CANVAS_BOOTSTRAP_API_KEY":      key,
		"CANVAS_ALLOW_PRIVATE_NETWORKS": "1",
	})
	status, project := d.postJSON(t, "/projects", key, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status)
	status, c := d.postJSON(t, "/prompt", key, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status)
	status, v := d.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Hi"}})
	require.Equal(t, http.StatusCreated, status)
	status, app := d.postJSON(t, "/applications", key, map[string]any{"name": "a", "promptId": c["id"],
		"events": map[string]any{"enabled": true, "url": receiver.URL, "headers": map[string]string{"x-tenant": "acme"}}})
	require.Equal(t, http.StatusCreated, status, "%v", app)
	wh, err := standardwebhooks.NewWebhook(app["secret"].(string))
	require.NoError(t, err)

	next := func(want string) {
		t.Helper()
		select {
		case got := <-hooks:
			require.NoError(t, wh.Verify(got.body, got.header))
			assert.Contains(t, string(got.body), `"type":"`+want+`"`)
			assert.Equal(t, "acme", got.header.Get("x-tenant"))
		case <-time.After(waitLimit):
			require.FailNow(t, "no notification", want)
		}
	}
	status, _ = d.postJSON(t, "/environment/publish", key, map[string]any{"resourceType": "prompt",
		"resourceId": c["id"], "envName": "production", "versionId": v["id"]})
	require.Equal(t, http.StatusCreated, status)
	next("publication.created")

	// Promoting a version through its update is a publication too.
	status, v2 := d.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Hello"}})
	require.Equal(t, http.StatusCreated, status)
	status, promoted := d.sendJSON(t, http.MethodPatch, "/prompt-version/"+v2["id"].(string), key, map[string]any{"promoted": true})
	require.Equal(t, http.StatusOK, status, "%v", promoted)
	assert.Equal(t, true, promoted["promoted"])
	next("publication.created")

	status, got := d.postJSON(t, "/v2/chat/completions", key, map[string]any{"canvas_id": c["id"], "application_id": app["id"]})
	require.Equal(t, http.StatusOK, status, "%v", got)
	next("completion.succeeded")

	status, tc := d.postJSON(t, "/test-case", key, map[string]any{"promptId": c["id"], "title": "greets"})
	require.Equal(t, http.StatusCreated, status, "%v", tc)
	status, res := d.postJSON(t, "/test-case/"+tc["id"].(string)+"/run", key, map[string]any{"promptVersionId": v["id"]})
	require.Equal(t, http.StatusOK, status, "%v", res)
	next("generation.completed")
	require.NoError(t, d.stop())
}

func TestApplicationConfig_ApplicationFlags(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		var c applicationConfig
		require.NoError(t, c.applicationFlags(getenv(nil)))
		assert.Equal(t, 24*time.Hour, c.SecretOverlap)
	})
	t.Run("OK", func(t *testing.T) {
		var c applicationConfig
		require.NoError(t, c.applicationFlags(getenv(map[string]string{"CANVAS_WEBHOOK_SECRET_OVERLAP": "90m"})))
		assert.Equal(t, 90*time.Minute, c.SecretOverlap)
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, v := range []string{"soon", "-1h", "0s"} {
			var c applicationConfig
			assert.Error(t, c.applicationFlags(getenv(map[string]string{"CANVAS_WEBHOOK_SECRET_OVERLAP": v})), v)
		}
		err := run(context.Background(), nil, getenv(map[string]string{"CANVAS_DATA": t.TempDir(),
			"CANVAS_ADDR": "127.0.0.1:0", "CANVAS_WEBHOOK_SECRET_OVERLAP": "soon"}), io.Discard, io.Discard)
		assert.Error(t, err)
	})
}
