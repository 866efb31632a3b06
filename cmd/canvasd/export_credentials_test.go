package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/model/vendors"
)

// fakeChat is an OpenAI-compatible chat completions endpoint answering
// "Bonjour" in the API's JSON, and keeping the bearer token and model of
// each request.
type fakeChat struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
	models []string
}

func newFakeChat(t *testing.T) *fakeChat {
	t.Helper()
	f := &fakeChat{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.tokens = append(f.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		f.models = append(f.models, body.Model)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
			"model": body.Model, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": "Bonjour", "refusal": nil}}}})
	}))
	t.Cleanup(f.Close)
	return f
}

// dataWorkspace opens a data directory (created when missing) with every
// vendor provider, and returns the engine and an admin context of its
// default workspace.
func dataWorkspace(t *testing.T, dir string) (*engine.Engine, context.Context) {
	t.Helper()
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, dir, engine.Options{ProviderKinds: vendors.Kinds(nil),
		Limits: engine.Limits{AllowPrivateNetworks: true}})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	_, _, err = eng.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	return eng, canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
}

// mustCredential creates an openai-compatible credential and returns its
// id.
func mustCredential(t *testing.T, ctx context.Context, eng *engine.Engine, name, key, baseURL string) string {
	t.Helper()
	c, err := eng.Credentials.CreateCredential(ctx, credential.CreateParams{Name: name, Provider: canvas.ProviderOpenAICompatible,
		APIKey: &key, BaseURL: &baseURL})
	require.NoError(t, err)
	return c.ID
}

// TestExport_CredentialsByName exports a canvas whose allowedCredentials,
// configuration, fallback and workflow llm node name credentials, checks
// that the files hold the credentials' names and no id or key, imports
// them into another data directory whose credentials have the same names,
// and runs the canvas there on its credential.
func TestExport_CredentialsByName(t *testing.T) {
	const srcKey, srcFallbackKey = "sk-source-local-key-0001", "sk-source-backup-key-0002"
	const dstKey, dstFallbackKey = "sk-target-local-key-0003", "sk-target-backup-key-0004"
	srcVendor, dstVendor := newFakeChat(t), newFakeChat(t)

	src := t.TempDir()
	eng, ctx := dataWorkspace(t, src)
	local := mustCredential(t, ctx, eng, "local", srcKey, srcVendor.URL+"/v1")
	backup := mustCredential(t, ctx, eng, "backup", srcFallbackKey, srcVendor.URL+"/v1")
	p, err := eng.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "support"})
	require.NoError(t, err)
	c, err := eng.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter", ProjectID: &p.ID,
		AllowedCredentials: []string{local, backup}})
	require.NoError(t, err)
	v, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Configuration: &canvas.Configuration{Model: "llama3.1:8b", CredentialID: local,
			Fallbacks: []canvas.Fallback{{Model: "qwen2.5:7b", CredentialID: backup}}},
		Message: &canvas.MessageInput{Role: canvas.RoleUser, Content: "Greet {{name}}"}})
	require.NoError(t, err)
	flow, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Title: "Flow",
		IsWorkflow: true, WorkflowSpec: json.RawMessage(`{"specVersion": "1", "nodes": [
			{"id": "start", "actionId": "input", "config": {"variables": [{"name": "name", "type": "text"}]}},
			{"id": "ask", "actionId": "llm", "config": {"model": "llama3.1:8b", "credentialId": "` + backup + `",
				"messages": [{"role": "user", "content": "Greet {{name}}"}]}},
			{"id": "done", "actionId": "output"}],
			"edges": [{"from": {"node": "start", "port": "out"}, "to": {"node": "ask", "port": "in"}},
				{"from": {"node": "ask", "port": "out"}, "to": {"node": "done", "port": "in"}}]}`)})
	require.NoError(t, err)
	require.NoError(t, eng.Close())

	out := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", out)
	files := readFiles(t, out)
	require.Len(t, files, 1)
	for name, text := range files {
		for _, secret := range []string{srcKey, srcFallbackKey, local, backup} {
			assert.NotContains(t, text, secret, "%s holds a key or a credential id", name)
		}
	}
	parsed, err := promptfile.ReadDir(out)
	require.NoError(t, err)
	f := parsed[0]
	assert.Equal(t, []string{"local", "backup"}, f.AllowedCredentials)
	cfg, err := json.Marshal(f.Version(v.ID).Configuration)
	require.NoError(t, err)
	assert.JSONEq(t, `{"model": "llama3.1:8b", "credential": "local",
		"fallbacks": [{"model": "qwen2.5:7b", "credential": "backup"}]}`, string(cfg))
	var spec bytes.Buffer
	require.NoError(t, json.Compact(&spec, f.Version(flow.ID).WorkflowSpec))
	assert.Contains(t, spec.String(), `"credential":"backup"`, "the llm node names its credential")

	t.Run("TargetLacksACredential", func(t *testing.T) {
		dst := t.TempDir()
		eng, ctx := dataWorkspace(t, dst)
		mustCredential(t, ctx, eng, "local", dstKey, dstVendor.URL+"/v1")
		require.NoError(t, eng.Close())
		err := runErr(t, "import", "--data", dst, "--in", out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `no credential named "backup"`)

		eng, ctx = dataWorkspace(t, dst)
		_, err = eng.Canvases.GetCanvas(ctx, c.ID)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "the canvas is not written")
	})
	t.Run("FileNamesACredentialByID", func(t *testing.T) {
		dir := t.TempDir()
		raw := strings.Replace(files[promptfile.FileName(f)], `"credential": "local"`, `"credentialId": "`+local+`"`, 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, promptfile.FileName(f)), []byte(raw), 0o644))
		dst := t.TempDir()
		eng, ctx := dataWorkspace(t, dst)
		mustCredential(t, ctx, eng, "local", dstKey, dstVendor.URL+"/v1")
		mustCredential(t, ctx, eng, "backup", dstFallbackKey, dstVendor.URL+"/v1")
		require.NoError(t, eng.Close())
		err := runErr(t, "import", "--data", dst, "--in", dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "credentialId")
	})

	dst := t.TempDir()
	eng, ctx = dataWorkspace(t, dst)
	dstBackup := mustCredential(t, ctx, eng, "backup", dstFallbackKey, dstVendor.URL+"/v1")
	dstLocal := mustCredential(t, ctx, eng, "local", dstKey, dstVendor.URL+"/v1")
	require.NoError(t, eng.Close())
	mustRun(t, nil, "import", "--data", dst, "--in", out)

	eng, ctx = dataWorkspace(t, dst)
	got, err := eng.Canvases.GetCanvas(ctx, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{dstLocal, dstBackup}, got.AllowedCredentials, "the names map to the target's credentials")
	gv, err := eng.Canvases.GetVersion(ctx, v.ID)
	require.NoError(t, err)
	assert.Equal(t, dstLocal, gv.Configuration.CredentialID)
	assert.Equal(t, []canvas.Fallback{{Model: "qwen2.5:7b", CredentialID: dstBackup}}, gv.Configuration.Fallbacks)
	gf, err := eng.Canvases.GetVersion(ctx, flow.ID)
	require.NoError(t, err)
	assert.Contains(t, string(gf.WorkflowSpec), `"credentialId":"`+dstBackup+`"`)

	res, err := eng.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID,
		Variables: map[string]any{"name": "Ada"}})
	require.NoError(t, err)
	assert.Equal(t, completion.StatusCompleted, res.Status)
	assert.Equal(t, dstLocal, res.CredentialID)
	assert.Equal(t, "Bonjour", res.Result.Choices[0].Message.Content.Text)
	dstVendor.mu.Lock()
	assert.Equal(t, []string{dstKey}, dstVendor.tokens, "the target's key reached the target's vendor")
	dstVendor.mu.Unlock()
	assert.Empty(t, srcVendor.tokens, "nothing ran at the source")

	again := t.TempDir()
	require.NoError(t, eng.Close())
	mustRun(t, nil, "export", "--data", dst, "--out", again)
	assert.Equal(t, files, readFiles(t, again), "export, import and export again gives the same bytes")
}

// runErr runs canvasd with args and returns its error.
func runErr(t *testing.T, args ...string) error {
	t.Helper()
	var stdout, stderr bytes.Buffer
	return run(context.Background(), args, getenv(nil), &stdout, &stderr)
}
