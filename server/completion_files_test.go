package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// filesMaxSize bounds the files the test env resolves, so that an oversize
// public file stays small.
const filesMaxSize = 1024

// pngSample starts with the PNG signature, enough for sniffing.
const pngSample = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

// newFilesEnv starts a server with the file vault (SQLite and blobs in a
// temp dir) and the completion service resolving files through it; public
// file URLs may reach loopback only when allowPrivate.
func newFilesEnv(t *testing.T, allowPrivate bool) *completionEnv {
	t.Helper()
	ce := &completionEnv{Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{}))}
	ce.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		blobs, err := vault.NewFSBlobs(filepath.Join(t.TempDir(), "files"))
		require.NoError(t, err)
		o.Files = vault.NewService(vault.Options{Store: db, Blobs: blobs})
		ce.Service = completion.NewService(completion.Options{Store: db, Canvases: db,
			Environments: o.Environments, Notify: ce.notify,
			Models: model.NewCaller(model.Options{Providers: ce.Providers, Files: model.FileOptions{
				Vault: model.VaultFiles(o.Files), AllowPrivateNetworks: allowPrivate, MaxSize: filesMaxSize}})})
		o.Completions = ce.Service
	})
	return ce
}

// uploadFile uploads data in two steps as token's workspace would (POST
// /v3/files, then PUT to the upload URL without credentials) and returns
// its vault:// address.
func uploadFile(t *testing.T, e *testEnv, token, name, contentType, data string) string {
	t.Helper()
	r := e.Do(http.MethodPost, "/v3/files", token, map[string]any{"fileName": name}, "x-compatibility-date", compatDate)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	created := r.Map(t)
	u, err := url.Parse(created["uploadUrl"].(string))
	require.NoError(t, err)
	r = e.Do(http.MethodPut, u.RequestURI(), "", data, "Content-Type", contentType)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return "vault://" + created["id"].(string)
}

// fileVersion creates a canvas whose version reads the file variables doc
// (multimodal off) and pic (multimodal on) with model, and returns the
// canvas and version ids.
func fileVersion(t *testing.T, e *testEnv, model string) (canvasID, versionID string) {
	t.Helper()
	canvasID = mustCanvas(t, e, mustProjectID(t, e, "files"), "Files")["id"].(string)
	versionID = mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{
		"promptId":      canvasID,
		"configuration": map[string]any{"model": model},
		"message":       map[string]any{"role": "user", "content": "Read {{doc}}{{pic}}"},
		"variables": []any{
			map[string]any{"name": "doc", "type": "file", "processingOptions": map[string]any{"allowMultimodal": false}},
			map[string]any{"name": "pic", "type": "file", "processingOptions": map[string]any{"allowMultimodal": true}},
		},
	})["id"].(string)
	return canvasID, versionID
}

// servePublic serves files by path over loopback HTTP.
func servePublic(t *testing.T, files map[string][2]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		_, _ = io.WriteString(w, f[1])
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func fileValue(urls ...string) any {
	if len(urls) == 1 {
		return map[string]any{"file_url": urls[0]}
	}
	out := make([]any, len(urls))
	for i, u := range urls {
		out[i] = map[string]any{"file_url": u}
	}
	return out
}

func TestCompletion_Files(t *testing.T) {
	e := newFilesEnv(t, true)
	canvasID, versionID := fileVersion(t, e.testEnv, "echo")
	pub := servePublic(t, map[string][2]string{
		"/q3.pdf":  {"application/pdf", "%PDF-1.7"},
		"/big.txt": {"text/plain", strings.Repeat("x", filesMaxSize+1)},
	})
	run := func(token string, vars map[string]any, extra map[string]any) *testResponse {
		return e.Do(http.MethodPost, completionsPath, token, merged(map[string]any{
			"canvas_id": canvasID, "version_id": versionID, "variables": vars}, extra))
	}

	t.Run("OK", func(t *testing.T) {
		addr := uploadFile(t, e.testEnv, e.Editor, "logo.png", "image/png", pngSample)
		r := run(e.Editor, map[string]any{"pic": fileValue(addr)}, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "Read [file name=logo.png type=image/png size=16]", completionText(t, r.Map(t)))
	})
	t.Run("Mixed", func(t *testing.T) {
		notes := uploadFile(t, e.testEnv, e.Editor, "notes.txt", "text/plain", "first line")
		r := run(e.Editor, map[string]any{"doc": fileValue(pub+"/q3.pdf", notes)}, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "Read [file name=q3.pdf type=application/pdf size=8]\n"+
			"[file name=notes.txt type=text/plain size=10]\nfirst line", completionText(t, r.Map(t)),
			"the public file arrives as its marker, the text file inlined under its own")
	})
	t.Run("Async", func(t *testing.T) {
		e.StartWorker(t, queue.WorkerOptions{})
		notes := uploadFile(t, e.testEnv, e.Editor, "later.txt", "text/plain", "read later")
		r := run(e.Editor, map[string]any{"doc": fileValue(notes)}, map[string]any{"async": true})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		got := e.waitRun(t, completionsPath+"/"+r.Map(t)["id"].(string))
		require.Equal(t, completion.StatusCompleted, got["status"], "%v", got)
		assert.Equal(t, "Read [file name=later.txt type=text/plain size=10]\nread later", completionText(t, got["result"].(map[string]any)))
	})
	t.Run("NotFound", func(t *testing.T) {
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		theirs := uploadFile(t, e.testEnv, e.KeyIn(other.ID, canvas.RoleEditor), "theirs.txt", "text/plain", "not yours")
		r := e.Do(http.MethodPost, "/v3/files", e.Editor, map[string]any{"fileName": "never.txt"}, "x-compatibility-date", compatDate)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		never := "vault://" + r.Map(t)["id"].(string)

		for name, addr := range map[string]string{"OtherWorkspace": theirs, "NeverUploaded": never,
			"Unknown": "vault://3f1c2a8e-5b7d-4c9e-8f0a-1b2c3d4e5f60"} {
			t.Run(name, func(t *testing.T) {
				r := run(e.Editor, map[string]any{"doc": fileValue(addr)}, nil)
				require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
				b := readError(t, r)
				assert.Equal(t, canvas.ENOTFOUND, b.Code)
				assert.Equal(t, []canvas.Detail{{Path: "/json/variables/doc",
					Message: "vault file " + strings.TrimPrefix(addr, "vault://") + " not found"}}, b.Details)
			})
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, tc := range map[string]struct{ url, want string }{
			"TooLarge": {pub + "/big.txt", "file is larger than the limit of 1024 bytes"},
			"Scheme":   {"ftp://example.com/a.txt", "must be a public http(s) URL or a vault:// address"},
		} {
			t.Run(name, func(t *testing.T) {
				r := run(e.Editor, map[string]any{"doc": fileValue(tc.url)}, nil)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
				b := readError(t, r)
				assert.Equal(t, canvas.EINVALID, b.Code)
				assert.Equal(t, []canvas.Detail{{Path: "/json/variables/doc", Message: tc.want}}, b.Details)
			})
		}
	})
}

func TestCompletion_FilesBlocked(t *testing.T) {
	e := newFilesEnv(t, false)
	canvasID, versionID := fileVersion(t, e.testEnv, "echo")
	pub := servePublic(t, map[string][2]string{"/a.txt": {"text/plain", "private"}})

	r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": canvasID,
		"version_id": versionID, "variables": map[string]any{"doc": fileValue(pub + "/a.txt")}})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	b := readError(t, r)
	assert.Equal(t, canvas.EINVALID, b.Code)
	assert.Equal(t, []canvas.Detail{{Path: "/json/variables/doc",
		Message: "file URL resolves to an address that is not allowed (loopback, private or link-local network)"}}, b.Details)
}

// openAIMessages is a fake OpenAI endpoint that records the messages of
// each request and answers "ok".
type openAIMessages struct {
	mu   sync.Mutex
	got  []json.RawMessage
	base string
}

func newOpenAIMessages(t *testing.T) *openAIMessages {
	t.Helper()
	f := &openAIMessages{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string          `json:"model"`
			Messages json.RawMessage `json:"messages"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.got = append(f.got, req.Messages)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"`+req.Model+`",
			"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	f.base = srv.URL + "/v1"
	return f
}

// Last returns the messages of the last request.
func (f *openAIMessages) Last(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.got)
	return string(f.got[len(f.got)-1])
}

func TestCompletion_FilesOpenAI(t *testing.T) {
	e := newFilesEnv(t, true)
	fake := newOpenAIMessages(t)
	oa, err := openai.New(openai.Options{BaseURL: fake.base})
	require.NoError(t, err)
	e.Providers.RegisterPrefix("", oa)
	canvasID, versionID := fileVersion(t, e.testEnv, "gpt-test")
	img := uploadFile(t, e.testEnv, e.Editor, "cat.png", "image/png", pngSample)
	const b64 = "iVBORw0KGgoAAAANSUhEUg==" // base64 of pngSample

	r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": canvasID, "version_id": versionID,
		"variables": map[string]any{"doc": fileValue(img), "pic": fileValue(img)}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `[{"role": "user", "content": [
		{"type": "text", "text": "Read [file name=cat.png type=image/png size=16][file name=cat.png type=image/png size=16]"},
		{"type": "file", "file": {"filename": "cat.png", "file_data": "data:image/png;base64,`+b64+`"}},
		{"type": "image_url", "image_url": {"url": "data:image/png;base64,`+b64+`"}}
	]}]`, fake.Last(t), "an image is an image part only where multimodal input is allowed")
}
