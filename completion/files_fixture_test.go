package completion_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// filesFixture is a real vault (SQLite and filesystem blobs in a temporary
// directory) with two workspaces, and editor contexts for each.
type filesFixture struct {
	DB       *sqlite.DB
	Vault    *vault.Service
	WS       string
	Other    string
	Ctx      context.Context
	OtherCtx context.Context
}

func newFilesFixture(t *testing.T) *filesFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := vault.NewFSBlobs(filepath.Join(dir, "files"))
	require.NoError(t, err)
	f := &filesFixture{DB: db, Vault: vault.NewService(vault.Options{Store: db, Blobs: blobs})}
	for _, ws := range []struct {
		name string
		id   *string
		ctx  *context.Context
	}{{"uploader", &f.WS, &f.Ctx}, {"other", &f.Other, &f.OtherCtx}} {
		w := &canvas.Workspace{Name: ws.name}
		require.NoError(t, db.CreateWorkspace(ctx, w))
		*ws.id = w.ID
		*ws.ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: w.ID, UserID: "ada", Role: canvas.RoleEditor})
	}
	return f
}

// Upload stores data as a file of ctx's workspace in two steps (create,
// then upload to the signed URL) and returns its vault:// address.
func (f *filesFixture) Upload(t *testing.T, ctx context.Context, name, contentType string, data string) string {
	t.Helper()
	up, err := f.Vault.CreateFile(ctx, vault.CreateFileParams{FileName: name})
	require.NoError(t, err)
	u, err := url.Parse(up.UploadURL)
	require.NoError(t, err)
	_, err = f.Vault.Upload(ctx, vault.UploadParams{ID: up.ID, Expires: u.Query().Get("expires"),
		Signature: u.Query().Get("signature"), ContentType: contentType, Body: strings.NewReader(data)})
	require.NoError(t, err)
	return vault.Address(up.ID)
}

// Pending creates a file of ctx's workspace whose bytes never arrive and
// returns its vault:// address.
func (f *filesFixture) Pending(t *testing.T, ctx context.Context) string {
	t.Helper()
	up, err := f.Vault.CreateFile(ctx, vault.CreateFileParams{FileName: "never.txt"})
	require.NoError(t, err)
	return vault.Address(up.ID)
}

// publicFile is one file a publicFiles server serves.
type publicFile struct {
	ContentType string
	Disposition string
	Body        string
	Status      int
	// Hang blocks until the client gives up.
	Hang bool
}

// publicFiles is an httptest server of files by path that counts the
// requests of each path.
type publicFiles struct {
	URL   string
	mu    sync.Mutex
	files map[string]publicFile
	hits  map[string]int
}

func newPublicFiles(t *testing.T, files map[string]publicFile) *publicFiles {
	t.Helper()
	p := &publicFiles{files: files, hits: make(map[string]int)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.URL.Path]++
		f, ok := p.files[r.URL.Path]
		p.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if f.Hang {
			<-r.Context().Done()
			return
		}
		if f.ContentType != "" {
			w.Header().Set("Content-Type", f.ContentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing by the test server
		}
		if f.Disposition != "" {
			w.Header().Set("Content-Disposition", f.Disposition)
		}
		if f.Status != 0 {
			w.WriteHeader(f.Status)
		}
		_, _ = w.Write([]byte(f.Body))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Hits returns how many requests path received.
func (p *publicFiles) Hits(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}
