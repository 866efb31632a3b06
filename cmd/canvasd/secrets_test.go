package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_NoSecretsInLogs runs a whole canvasd session that handles
// every kind of secret the server knows, in requests that succeed and that
// fail, and then reads every line the server logged: no secret appears in
// it. The secrets are the admin API key, a key made by `keys create`, the
// JWT secret and a token it signed, an application's signing secrets
// (made, rotated and used to sign deliveries that fail), a credential's
// keys (made, rotated, refused and deleted), the OpenAI API key (sent to a
// back end that fails), an upload URL's signature (used and
// tampered with), and a forwarded webhook header.
func TestServe_NoSecretsInLogs(t *testing.T) {
	t.Parallel()
	var receiverCalls atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiverCalls.Add(1)
		http.Error(w, "receiver down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(receiver.Close)
	var modelCalls atomic.Int64
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		modelCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}`)
	}))
	t.Cleanup(model.Close)

	dir := t.TempDir()
	admin := uuid.NewString()
	jwtSecret := "jwt-secret-" + uuid.NewString()
	openAIKey := "sk-test-" + uuid.NewString()
	forwarded := "forwarded-credential-" + uuid.NewString()
	vars := map[string]string{
		"CANVAS_BOOTSTRAP_API_KEY":      admin,
		"CANVAS_JWT_SECRET":             jwtSecret,
		"CANVAS_OPENAI_BASE_URL":        model.URL,
		"CANVAS_OPENAI_API_KEY":         openAIKey,
		"CANVAS_ALLOW_PRIVATE_NETWORKS": "1",
	}
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir, "--log-level", "debug"}, vars)
	editor := strings.TrimSpace(strings.SplitN(mustRun(t, vars, "keys", "create", "--data", dir,
		"--workspace", "default", "--role", "editor"), "\n", 2)[0])
	secrets := map[string]string{"admin key": admin, "editor key": editor, "JWT secret": jwtSecret,
		"OpenAI API key": openAIKey, "forwarded header": forwarded}

	ws, err := openStore(t, dir).GetWorkspaceByName(t.Context(), "default")
	require.NoError(t, err)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user-1",
		"workspace_id": ws.ID, "role": "admin", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(jwtSecret))
	require.NoError(t, err)
	secrets["JWT"] = token
	forged, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user-1",
		"workspace_id": ws.ID, "role": "admin", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("wrong-" + jwtSecret))
	require.NoError(t, err)
	secrets["forged JWT"] = forged

	do := func(method, path, bearer string, body any, headers ...string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, d.URL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}

	// Credentials, good and bad.
	status, _ := do(http.MethodGet, "/projects", token, nil)
	require.Equal(t, http.StatusOK, status, "the JWT authenticates")
	status, _ = do(http.MethodGet, "/projects", forged, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = do(http.MethodGet, "/projects", uuid.NewString(), nil)
	require.Equal(t, http.StatusUnauthorized, status)

	// A canvas whose version runs on the OpenAI back end, which fails.
	status, project := do(http.MethodPost, "/projects", admin, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status)
	status, c := do(http.MethodPost, "/prompt", editor, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status)
	status, v := do(http.MethodPost, "/prompt-version", editor, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "gpt-test"}, "message": map[string]any{"role": "system", "content": "Hi"}})
	require.Equal(t, http.StatusCreated, status)
	status, _ = do(http.MethodPost, "/environment/publish", editor, map[string]any{"resourceType": "prompt",
		"resourceId": c["id"], "envName": "production", "versionId": v["id"]})
	require.Equal(t, http.StatusCreated, status)

	// An application with a signing secret, rotated, whose deliveries fail.
	status, app := do(http.MethodPost, "/applications", admin, map[string]any{"name": "a", "promptId": c["id"],
		"events": map[string]any{"enabled": true, "url": receiver.URL}})
	require.Equal(t, http.StatusCreated, status, "%v", app)
	appSecret, _ := app["secret"].(string)
	require.NotEmpty(t, appSecret, "%v", app)
	secrets["application secret"] = appSecret
	status, rotated := do(http.MethodPost, "/applications/"+app["id"].(string)+"/events/rotate-secret", admin, nil)
	require.Equal(t, http.StatusOK, status, "%v", rotated)
	newSecret, _ := rotated["secret"].(string)
	require.NotEmpty(t, newSecret, "%v", rotated)
	secrets["rotated application secret"] = newSecret
	status, _ = do(http.MethodPost, "/applications/"+app["id"].(string)+"/events/test", admin, nil)
	require.Equal(t, http.StatusOK, status)

	// A credential made, rotated, refused when its new key is malformed,
	// and deleted.
	credKey, credRotated := "sk-ant-cred-"+uuid.NewString(), "sk-ant-rotated-"+uuid.NewString()
	secrets["credential key"], secrets["rotated credential key"] = credKey, credRotated
	status, cred := do(http.MethodPost, "/credentials", admin, map[string]any{"name": "claude", "provider": "anthropic",
		"apiKey": credKey})
	require.Equal(t, http.StatusCreated, status, "%v", cred)
	credPath := "/credentials/" + cred["id"].(string)
	status, _ = do(http.MethodPatch, credPath, admin, map[string]any{"apiKey": credRotated})
	require.Equal(t, http.StatusOK, status)
	status, refused := do(http.MethodPatch, credPath, admin, map[string]any{"apiKey": credRotated + "\n"})
	require.Equal(t, http.StatusUnprocessableEntity, status, "%v", refused)
	status, _ = do(http.MethodPost, "/credentials", editor, map[string]any{"name": "x", "provider": "openai", "apiKey": credKey})
	require.Equal(t, http.StatusForbidden, status)
	status, _ = do(http.MethodDelete, credPath, admin, nil)
	require.Equal(t, http.StatusNoContent, status)

	// Completions that fail at the model: sync, async with the
	// application, and async with a webhook and a forwarded credential.
	status, _ = do(http.MethodPost, "/v2/chat/completions", editor, map[string]any{"canvas_id": c["id"]})
	require.Equal(t, http.StatusBadGateway, status)
	status, _ = do(http.MethodPost, "/v2/chat/completions", editor, map[string]any{"canvas_id": c["id"],
		"application_id": app["id"], "async": true})
	require.Equal(t, http.StatusAccepted, status)
	status, _ = do(http.MethodPost, "/v2/chat/completions", editor, map[string]any{"canvas_id": c["id"],
		"webhook_url": receiver.URL}, "x-svc-forward-authorization", "Bearer "+forwarded)
	require.Equal(t, http.StatusAccepted, status)

	// A file upload through its signed URL, and the URL tampered with.
	status, file := do(http.MethodPost, "/v3/files", editor, map[string]any{"fileName": "a.txt"},
		"x-compatibility-date", "2025-01-01")
	require.Equal(t, http.StatusCreated, status, "%v", file)
	upload, err := url.Parse(file["uploadUrl"].(string))
	require.NoError(t, err)
	secrets["upload signature"] = upload.Query().Get("signature")
	require.NotEmpty(t, secrets["upload signature"])
	put := func(u string) int {
		req, err := http.NewRequest(http.MethodPut, u, strings.NewReader("hello"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	tampered := *upload
	q := tampered.Query()
	q.Set("expires", "1")
	tampered.RawQuery = q.Encode()
	assert.Equal(t, http.StatusForbidden, put(tampered.String()))
	assert.Equal(t, http.StatusOK, put(upload.String()))
	assert.Equal(t, http.StatusConflict, put(upload.String()))

	// The background work has run (the model and the receiver were
	// called) before the server stops and its log is read.
	require.Eventually(t, func() bool { return modelCalls.Load() >= 3 && receiverCalls.Load() >= 3 },
		waitLimit, 20*time.Millisecond, "model calls %d, receiver calls %d", modelCalls.Load(), receiverCalls.Load())
	require.NoError(t, d.stop())

	log := d.Stderr.String()
	require.Contains(t, log, `"msg":"request"`, "the session was logged")
	require.Contains(t, log, "/v3/files/", "uploads were logged")
	for name, secret := range secrets {
		assert.NotContains(t, log, secret, "the %s appears in the log", name)
	}
	stdout := d.Stdout.String()
	assert.Contains(t, stdout, "listening on ")
	for name, secret := range secrets {
		if name != "admin key" { // printed once on standard output, by design, when it was random
			assert.NotContains(t, stdout, secret, "the %s appears on standard output", name)
		}
	}
}
