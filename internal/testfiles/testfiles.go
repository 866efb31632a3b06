// Package testfiles holds the fixtures of the tests that run models over
// files: a real vault in a temporary directory with two workspaces, and a
// server of public files.
package testfiles

import (
	"context"
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
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Fixture is a real vault (SQLite and filesystem blobs in a temporary
// directory) with two workspaces, and editor contexts for each.
type Fixture struct {
	DB       *sqlite.DB
	Vault    *vault.Service
	WS       string
	Other    string
	Ctx      context.Context
	OtherCtx context.Context
}

// New returns a Fixture whose store and files go when t ends.
func New(t *testing.T) *Fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	blobs, err := vault.NewFSBlobs(filepath.Join(dir, "files"))
	require.NoError(t, err)
	f := &Fixture{DB: db, Vault: vault.NewService(vault.Options{Store: db, Blobs: blobs})}
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
func (f *Fixture) Upload(t *testing.T, ctx context.Context, name, contentType string, data string) string {
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
func (f *Fixture) Pending(t *testing.T, ctx context.Context) string {
	t.Helper()
	up, err := f.Vault.CreateFile(ctx, vault.CreateFileParams{FileName: "never.txt"})
	require.NoError(t, err)
	return vault.Address(up.ID)
}

// PublicFile is one file a PublicFiles server serves.
type PublicFile struct {
	ContentType string
	Disposition string
	Body        string
	Status      int
	// Hang blocks until the client gives up.
	Hang bool
}

// PublicFiles is an httptest server of files by path that counts the
// requests of each path.
type PublicFiles struct {
	URL   string
	mu    sync.Mutex
	files map[string]PublicFile
	hits  map[string]int
}

// NewPublicFiles serves files until t ends.
func NewPublicFiles(t *testing.T, files map[string]PublicFile) *PublicFiles {
	t.Helper()
	p := &PublicFiles{files: files, hits: make(map[string]int)}
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
func (p *PublicFiles) Hits(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

// Value is the value of a file variable that names the file at u.
func Value(u string) map[string]any { return map[string]any{"file_url": u} }

// RequireError asserts err's code and that its one detail, at the file
// variable doc, contains want.
func RequireError(t *testing.T, err error, code, want string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, code, canvas.ErrorCode(err), "%v", err)
	details := canvas.ErrorDetails(err)
	require.Len(t, details, 1)
	assert.Equal(t, "/json/variables/doc", details[0].Path)
	assert.Contains(t, details[0].Message, want)
}
