package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

const (
	filesPath  = "/v3/files"
	compatDate = "2025-01-01"
	// testBaseURL prefixes the upload URLs of the file tests; the tests
	// send the URL's path and query to the test server.
	testBaseURL = "http://files.test"
	// testMaxSize is the upload limit of the file tests.
	testMaxSize = 1024
)

// pngHeader is the start of a PNG image, enough for sniffing.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

// testClock is a clock the file tests move forward.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().UTC().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d.
func (c *testClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// fileEnv is a test server with the file vault, its blob directory and a
// clock shared by the vault and the store.
type fileEnv struct {
	*testEnv
	Files   *vault.Service
	BlobDir string
	Clock   *testClock
}

// newFileEnv starts a server with the vault, upload limit testMaxSize.
func newFileEnv(t *testing.T) *fileEnv {
	t.Helper()
	fe := &fileEnv{BlobDir: t.TempDir(), Clock: &testClock{}}
	fe.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		db.Now = fe.Clock.Now
		fe.Files = newTestVault(t, db, fe.BlobDir, fe.Clock.Now)
		o.Files = fe.Files
	})
	return fe
}

// newTestVault returns a vault over db with its bytes in dir.
func newTestVault(t testing.TB, db *sqlite.DB, dir string, now func() time.Time) *vault.Service {
	t.Helper()
	blobs, err := vault.NewFSBlobs(dir)
	require.NoError(t, err)
	return vault.NewService(vault.Options{Store: db, Blobs: blobs, BaseURL: testBaseURL + "/",
		MaxSize: testMaxSize, Now: now})
}

// FileDo sends a /v3/files request with the compatibility date.
func (e *fileEnv) FileDo(method, path, token string, body any) *testResponse {
	e.t.Helper()
	return e.Do(method, path, token, body, "x-compatibility-date", compatDate)
}

// MustCreate requests an upload URL for name and returns the answer.
func (e *fileEnv) MustCreate(t *testing.T, name string) vault.Upload {
	t.Helper()
	r := e.FileDo(http.MethodPost, filesPath, e.Editor, map[string]any{"fileName": name})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var up vault.Upload
	r.JSON(t, &up)
	return up
}

// Put sends body to an upload URL, with Content-Type contentType ("" sends
// an empty header) and no Authorization.
func (e *fileEnv) Put(t *testing.T, uploadURL string, body []byte, contentType string) *testResponse {
	t.Helper()
	u, err := url.Parse(uploadURL)
	require.NoError(t, err)
	return e.Do(http.MethodPut, u.RequestURI(), "", body, "Content-Type", contentType)
}

// MustUpload creates a file and uploads body as contentType.
func (e *fileEnv) MustUpload(t *testing.T, name string, body []byte, contentType string) vault.File {
	t.Helper()
	up := e.MustCreate(t, name)
	r := e.Put(t, up.UploadURL, body, contentType)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var f vault.File
	r.JSON(t, &f)
	return f
}

// blobNames lists the blob directory.
func (e *fileEnv) blobNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(e.BlobDir)
	require.NoError(t, err)
	var names []string
	for _, d := range entries {
		names = append(names, d.Name())
	}
	return names
}

// withQuery returns uploadURL with one query parameter replaced.
func withQuery(t *testing.T, uploadURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(uploadURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestFile_Create(t *testing.T) {
	e := newFileEnv(t)
	t.Run("OK", func(t *testing.T) {
		before := e.Clock.Now()
		r := e.FileDo(http.MethodPost, filesPath, e.Editor, map[string]any{"fileName": "notes.txt"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		assert.Equal(t, compatDate, r.Header.Get("x-compatibility-date"))
		var up vault.Upload
		r.JSON(t, &up)
		assert.True(t, strings.HasPrefix(up.UploadURL, testBaseURL+"/v3/files/"+up.ID+"/content?"), up.UploadURL)
		assert.WithinDuration(t, before.Add(vault.DefaultURLLifetime), up.ExpiresAt, 2*time.Second)
		u, err := url.Parse(up.UploadURL)
		require.NoError(t, err)
		assert.Equal(t, strconv.FormatInt(up.ExpiresAt.Unix(), 10), u.Query().Get("expires"))
		assert.NotEmpty(t, u.Query().Get("signature"))

		got := e.FileDo(http.MethodGet, filesPath+"/"+up.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
		m := got.Map(t)
		assert.Equal(t, vault.StatusPending, m["status"])
		assert.Equal(t, "notes.txt", m["fileName"])
		assert.Equal(t, e.Workspace.ID, m["workspaceId"])
		assert.Nil(t, m["uploadedAt"])
	})
	t.Run("Validation", func(t *testing.T) {
		for name, body := range map[string]any{
			"Missing":   map[string]any{},
			"Empty":     map[string]any{"fileName": ""},
			"Slash":     map[string]any{"fileName": "../etc/passwd"},
			"Backslash": map[string]any{"fileName": `a\b.txt`},
			"TooLong":   map[string]any{"fileName": strings.Repeat("x", 256)},
			"Control":   map[string]any{"fileName": "a\nb.txt"},
			"WrongType": map[string]any{"fileName": 5},
		} {
			t.Run(name, func(t *testing.T) {
				r := e.FileDo(http.MethodPost, filesPath, e.Editor, body)
				assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
				assert.Equal(t, canvas.EINVALID, r.Code(t))
			})
		}
	})
	t.Run("Forbidden", func(t *testing.T) {
		r := e.FileDo(http.MethodPost, filesPath, e.Viewer, map[string]any{"fileName": "a.txt"})
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		r := e.FileDo(http.MethodPost, filesPath, "", map[string]any{"fileName": "a.txt"})
		assert.Equal(t, http.StatusUnauthorized, r.Status)
	})
}

func TestFile_CompatibilityDate(t *testing.T) {
	e := newFileEnv(t)
	f := e.MustUpload(t, "a.txt", []byte("hello"), "text/plain")
	ops := []struct{ method, path string }{
		{http.MethodPost, filesPath},
		{http.MethodGet, filesPath + "/" + f.ID},
		{http.MethodDelete, filesPath + "/" + f.ID},
	}
	for _, op := range ops {
		for name, date := range map[string]string{"Missing": "", "Malformed": "01/02/2025", "NotADay": "2025-02-30",
			"Short": "2025-1-1", "TooEarly": "2024-12-31"} {
			t.Run(op.method+name, func(t *testing.T) {
				var headers []string
				if date != "" {
					headers = []string{"x-compatibility-date", date}
				}
				r := e.Do(op.method, op.path, e.Editor, map[string]any{"fileName": "b.txt"}, headers...)
				assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
				assert.Equal(t, canvas.EINVALIDCOMPATDATE, r.Code(t))
			})
		}
	}
	t.Run("LaterDateEchoesTheDateUsed", func(t *testing.T) {
		r := e.Do(http.MethodGet, filesPath+"/"+f.ID, e.Viewer, nil, "x-compatibility-date", "2026-07-15")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "2025-01-01", r.Header.Get("x-compatibility-date"))
	})
	t.Run("NotNeededForUpload", func(t *testing.T) {
		up := e.MustCreate(t, "c.txt")
		r := e.Put(t, up.UploadURL, []byte("bytes"), "text/plain")
		assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	})
}

func TestFile_Upload(t *testing.T) {
	e := newFileEnv(t)
	t.Run("OK", func(t *testing.T) {
		data := []byte(`{"greeting": "hello"}`)
		before := e.Clock.Now()
		up := e.MustCreate(t, "greeting.json")
		r := e.Put(t, up.UploadURL, data, "application/json")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		got := e.FileDo(http.MethodGet, filesPath+"/"+up.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
		var f vault.File
		got.JSON(t, &f)
		sum := sha256.Sum256(data)
		assert.Equal(t, up.ID, f.ID)
		assert.Equal(t, "greeting.json", f.FileName)
		assert.Equal(t, "application/json", f.MimeType)
		assert.Equal(t, int64(len(data)), f.Size)
		assert.Equal(t, hex.EncodeToString(sum[:]), f.SHA256)
		assert.Equal(t, vault.StatusUploaded, f.Status)
		assert.Equal(t, e.Workspace.ID, f.WorkspaceID)
		assert.NotEmpty(t, f.CreatedBy)
		require.NotNil(t, f.UploadedAt)
		assert.WithinDuration(t, before, *f.UploadedAt, 5*time.Second)
		assert.True(t, up.ExpiresAt.Equal(f.ExpiresAt))

		ctx := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: e.Workspace.ID, Role: canvas.RoleViewer})
		meta, rc, err := e.Files.Open(ctx, up.ID)
		require.NoError(t, err)
		defer rc.Close()
		stored, err := io.ReadAll(rc)
		require.NoError(t, err)
		assert.Equal(t, data, stored)
		assert.Equal(t, f.SHA256, meta.SHA256)
	})
	t.Run("Sniffed", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body        []byte
			contentType string
			want        string
		}{
			"MissingPNG":      {pngHeader, "", "image/png"},
			"OctetPNG":        {pngHeader, "application/octet-stream", "image/png"},
			"OctetText":       {[]byte("plain words"), "application/octet-stream", "text/plain; charset=utf-8"},
			"DeclaredKept":    {[]byte("%PDF-1.7 not really"), "application/pdf", "application/pdf"},
			"ParamsKept":      {[]byte("a,b"), "text/csv; charset=UTF-8", "text/csv; charset=UTF-8"},
			"EmptyBodyIsOK":   {[]byte{}, "text/plain", "text/plain"},
			"DeclaredNoSniff": {pngHeader, "text/plain", "text/plain"},
		} {
			t.Run(name, func(t *testing.T) {
				f := e.MustUpload(t, "f", tc.body, tc.contentType)
				assert.Equal(t, tc.want, f.MimeType)
				assert.Equal(t, int64(len(tc.body)), f.Size)
			})
		}
	})
	t.Run("MalformedContentType", func(t *testing.T) {
		up := e.MustCreate(t, "a.txt")
		r := e.Put(t, up.UploadURL, []byte("x"), "text/")
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EINVALID, r.Code(t))
	})
	t.Run("ForbiddenExpired", func(t *testing.T) {
		fe := newFileEnv(t)
		up := fe.MustCreate(t, "late.txt")
		fe.Clock.Advance(vault.DefaultURLLifetime + time.Second)
		r := fe.Put(t, up.UploadURL, []byte("too late"), "text/plain")
		assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EFORBIDDEN, r.Code(t))
		assert.Empty(t, fe.blobNames(t))
	})
	t.Run("ForbiddenTampered", func(t *testing.T) {
		up := e.MustCreate(t, "a.txt")
		other := e.MustCreate(t, "b.txt")
		u, err := url.Parse(up.UploadURL)
		require.NoError(t, err)
		sig := u.Query().Get("signature")
		flipped := []byte(sig)
		flipped[len(flipped)/2] ^= 1
		for name, target := range map[string]string{
			"Signature":      withQuery(t, up.UploadURL, "signature", string(flipped)),
			"NoSignature":    withQuery(t, up.UploadURL, "signature", ""),
			"Expiry":         withQuery(t, up.UploadURL, "expires", strconv.FormatInt(up.ExpiresAt.Add(time.Hour).Unix(), 10)),
			"ID":             strings.Replace(up.UploadURL, up.ID, other.ID, 1),
			"OtherSignature": withQuery(t, up.UploadURL, "signature", mustQuery(t, other.UploadURL, "signature")),
		} {
			t.Run(name, func(t *testing.T) {
				r := e.Put(t, target, []byte("x"), "text/plain")
				assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
				assert.Equal(t, canvas.EFORBIDDEN, r.Code(t))
			})
		}
		r := e.Put(t, up.UploadURL, []byte("x"), "text/plain")
		assert.Equal(t, http.StatusOK, r.Status, "the genuine URL still works: %s", r.Body)
	})
	t.Run("ConflictSecondUpload", func(t *testing.T) {
		up := e.MustCreate(t, "once.txt")
		require.Equal(t, http.StatusOK, e.Put(t, up.UploadURL, []byte("first"), "text/plain").Status)
		r := e.Put(t, up.UploadURL, []byte("second"), "text/plain")
		assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, r.Code(t))
		f := e.FileDo(http.MethodGet, filesPath+"/"+up.ID, e.Viewer, nil).Map(t)
		assert.EqualValues(t, len("first"), f["size"], "the first upload is kept")
	})
	t.Run("ConflictConcurrent", func(t *testing.T) {
		fe := newFileEnv(t)
		up := fe.MustCreate(t, "race.txt")
		u, err := url.Parse(up.UploadURL)
		require.NoError(t, err)
		const n = 6
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				req, err := http.NewRequest(http.MethodPut, fe.URL+u.RequestURI(), strings.NewReader(strings.Repeat("x", 100+i)))
				if err != nil {
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			if s == http.StatusOK {
				ok++
			} else {
				assert.Equal(t, http.StatusConflict, s)
			}
		}
		assert.Equal(t, 1, ok, "exactly one upload wins")
		assert.Len(t, fe.blobNames(t), 1, "the losers' bytes are removed")
	})
	t.Run("PayloadTooLarge", func(t *testing.T) {
		fe := newFileEnv(t)
		up := fe.MustCreate(t, "big.bin")
		r := fe.Put(t, up.UploadURL, bytes.Repeat([]byte("x"), testMaxSize+1), "application/octet-stream")
		assert.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, r.Code(t))
		assert.Empty(t, fe.blobNames(t), "nothing is left behind")
		f := fe.FileDo(http.MethodGet, filesPath+"/"+up.ID, fe.Viewer, nil).Map(t)
		assert.Equal(t, vault.StatusPending, f["status"])

		r = fe.Put(t, up.UploadURL, bytes.Repeat([]byte("x"), testMaxSize), "application/octet-stream")
		assert.Equal(t, http.StatusOK, r.Status, "a file of exactly the limit fits: %s", r.Body)
	})
	t.Run("PayloadTooLargeStreamed", func(t *testing.T) {
		fe := newFileEnv(t)
		up := fe.MustCreate(t, "big.bin")
		u, err := url.Parse(up.UploadURL)
		require.NoError(t, err)
		// No Content-Length: the limit is enforced while streaming.
		body := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("y"), testMaxSize)), strings.NewReader("overflow"))
		req, err := http.NewRequest(http.MethodPut, fe.URL+u.RequestURI(), body)
		require.NoError(t, err)
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Empty(t, fe.blobNames(t), "the temporary file is removed")
	})
	t.Run("NotFoundUnknown", func(t *testing.T) {
		secret, err := e.Store.UploadSecret(context.Background())
		require.NoError(t, err)
		path := vault.SignedPath(secret, "0d9c4f7e-1111-4222-8333-444455556666", e.Clock.Now().Add(time.Minute))
		r := e.Do(http.MethodPut, path, "", []byte("x"), "Content-Type", "text/plain")
		assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
}

// mustQuery returns one query parameter of rawURL.
func mustQuery(t *testing.T, rawURL, key string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u.Query().Get(key)
}

func TestFile_Get(t *testing.T) {
	e := newFileEnv(t)
	f := e.MustUpload(t, "a.txt", []byte("hello"), "text/plain")
	t.Run("OK", func(t *testing.T) {
		r := e.FileDo(http.MethodGet, filesPath+"/"+f.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, f.SHA256, r.Map(t)["sha256"])
	})
	t.Run("NotFoundOtherWorkspace", func(t *testing.T) {
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		token := e.KeyIn(other.ID, canvas.RoleAdmin)
		r := e.FileDo(http.MethodGet, filesPath+"/"+f.ID, token, nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
		assert.Equal(t, canvas.ENOTFOUND, r.Code(t))
		r = e.FileDo(http.MethodDelete, filesPath+"/"+f.ID, token, nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
	})
	t.Run("NotFoundUnknown", func(t *testing.T) {
		r := e.FileDo(http.MethodGet, filesPath+"/0d9c4f7e-1111-4222-8333-444455556666", e.Viewer, nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
	})
	t.Run("InvalidID", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			r := e.FileDo(method, filesPath+"/not-a-uuid", e.Editor, nil)
			assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", method, r.Body)
			assert.Equal(t, canvas.EINVALID, r.Code(t))
		}
	})
}

func TestFile_Open(t *testing.T) {
	e := newFileEnv(t)
	viewer := func(workspaceID string) context.Context {
		return canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: workspaceID, Role: canvas.RoleViewer})
	}
	uploaded := e.MustUpload(t, "a.txt", []byte("hello"), "text/plain")
	t.Run("OK", func(t *testing.T) {
		f, rc, err := e.Files.Open(viewer(e.Workspace.ID), vault.Address(uploaded.ID)[len(vault.Scheme):])
		require.NoError(t, err)
		defer rc.Close()
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		assert.Equal(t, "hello", string(b))
		assert.Equal(t, "text/plain", f.MimeType)
	})
	t.Run("NotFoundPending", func(t *testing.T) {
		up := e.MustCreate(t, "pending.txt")
		_, _, err := e.Files.Open(viewer(e.Workspace.ID), up.ID)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("NotFoundOtherWorkspace", func(t *testing.T) {
		other := &canvas.Workspace{Name: "elsewhere"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		_, _, err := e.Files.Open(viewer(other.ID), uploaded.ID)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("NotFoundUnknown", func(t *testing.T) {
		_, _, err := e.Files.Open(viewer(e.Workspace.ID), "0d9c4f7e-1111-4222-8333-444455556666")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("Unauthorized", func(t *testing.T) {
		_, _, err := e.Files.Open(context.Background(), uploaded.ID)
		assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err))
	})
}

func TestFile_Delete(t *testing.T) {
	e := newFileEnv(t)
	t.Run("OK", func(t *testing.T) {
		f := e.MustUpload(t, "a.txt", []byte("hello"), "text/plain")
		require.Len(t, e.blobNames(t), 1)
		r := e.FileDo(http.MethodDelete, filesPath+"/"+f.ID, e.Editor, nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Empty(t, e.blobNames(t), "the bytes are removed")
		assert.Equal(t, http.StatusNotFound, e.FileDo(http.MethodGet, filesPath+"/"+f.ID, e.Viewer, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.FileDo(http.MethodDelete, filesPath+"/"+f.ID, e.Editor, nil).Status)
	})
	t.Run("Pending", func(t *testing.T) {
		up := e.MustCreate(t, "p.txt")
		r := e.FileDo(http.MethodDelete, filesPath+"/"+up.ID, e.Editor, nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		r = e.Put(t, up.UploadURL, []byte("x"), "text/plain")
		assert.Equal(t, http.StatusNotFound, r.Status, "a deleted file takes no upload")
	})
	t.Run("Forbidden", func(t *testing.T) {
		up := e.MustCreate(t, "v.txt")
		r := e.FileDo(http.MethodDelete, filesPath+"/"+up.ID, e.Viewer, nil)
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
}

func TestFile_ExpireJob(t *testing.T) {
	e := newFileEnv(t)
	pending := e.MustCreate(t, "never.txt")
	uploaded := e.MustUpload(t, "kept.txt", []byte("hello"), "text/plain")
	// Bytes an interrupted upload stored for the pending file but never
	// recorded.
	orphan := filepath.Join(e.BlobDir, pending.ID+"-interrupted")
	require.NoError(t, os.WriteFile(orphan, []byte("partial"), 0o600))
	e.Clock.Advance(vault.DefaultURLLifetime + 2*time.Minute)

	w := queue.NewWorker(e.Store, queue.WorkerOptions{PollInterval: 10 * time.Millisecond})
	w.Handle(vault.JobKindExpire, e.Files.HandleExpireJob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})

	require.Eventually(t, func() bool {
		return e.FileDo(http.MethodGet, filesPath+"/"+pending.ID, e.Viewer, nil).Status == http.StatusNotFound
	}, 10*time.Second, 10*time.Millisecond, "the expired pending file is removed")
	// Both expiry jobs finish; the uploaded file's leaves it alone.
	require.Eventually(t, func() bool {
		n, err := e.Store.ClaimJobs(context.Background(), "probe", []string{vault.JobKindExpire}, 10, time.Millisecond)
		require.NoError(t, err)
		return len(n) == 0
	}, 10*time.Second, 10*time.Millisecond)
	r := e.FileDo(http.MethodGet, filesPath+"/"+uploaded.ID, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, vault.StatusUploaded, r.Map(t)["status"])
	assert.Len(t, e.blobNames(t), 1, "the uploaded file's bytes stay")
	assert.NoFileExists(t, orphan, "the pending file's stray bytes are removed")
}

func TestFile_SecretSurvivesRestart(t *testing.T) {
	e := newFileEnv(t)
	up := e.MustCreate(t, "across.txt")

	// A second process on the same data: its own store connection, vault
	// and server, with nothing shared in memory.
	db, err := sqlite.Open(context.Background(), e.Path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	h, err := server.New(server.Options{Store: db, Canvases: canvas.NewService(canvas.Options{Store: db}), Environments: env.NewService(env.Options{Store: db, Canvases: db, Changes: db}),
		Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}), Files: newTestVault(t, db, e.BlobDir, nil)})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	u, err := url.Parse(up.UploadURL)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, srv.URL+u.RequestURI(), strings.NewReader("signed before"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a URL signed by the first process verifies in the second")
	f := e.FileDo(http.MethodGet, filesPath+"/"+up.ID, e.Viewer, nil).Map(t)
	assert.Equal(t, vault.StatusUploaded, f["status"])
}
