package vault

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
)

// File statuses.
const (
	// StatusPending is a file whose upload URL was issued but whose bytes
	// have not arrived.
	StatusPending = "pending"
	// StatusUploaded is a file whose bytes are stored.
	StatusUploaded = "uploaded"
)

// Scheme is the address scheme of a vault file in completion variables:
// "vault://<file id>".
const Scheme = "vault://"

// JobKindExpire is the queue kind of the job that removes a pending file
// whose upload URL expired without an upload.
const JobKindExpire = "vault.expire"

// Defaults of Options.
const (
	DefaultURLLifetime = 15 * time.Minute
	DefaultMaxSize     = 32 << 20
)

// MaxFileNameLength bounds a file name, in characters.
const MaxFileNameLength = 255

// File is the metadata of one uploaded (or pending) file. MimeType, Size
// and SHA256 are empty until the bytes arrive; UploadedAt is nil until
// then. ExpiresAt is when the upload URL stops working.
type File struct {
	ID          string     `json:"id"`
	FileName    string     `json:"fileName"`
	MimeType    string     `json:"mimeType"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	Status      string     `json:"status"`
	WorkspaceID string     `json:"workspaceId"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	UploadedAt  *time.Time `json:"uploadedAt"`
	ExpiresAt   time.Time  `json:"expiresAt"`

	// BlobKey names the file's bytes in Blobs; it is set by the upload
	// that won the claim and is never shown.
	BlobKey string `json:"-"`
}

// Uploaded reports whether the file's bytes are stored.
func (f *File) Uploaded() bool { return f.Status == StatusUploaded }

// ParseAddress returns the file id of a "vault://<id>" address and true, or
// "" and false when url is not a vault address.
func ParseAddress(url string) (id string, ok bool) {
	if !strings.HasPrefix(url, Scheme) {
		return "", false
	}
	return strings.TrimPrefix(url, Scheme), true
}

// Address returns the "vault://<id>" address of a file id.
func Address(id string) string { return Scheme + id }

// UploadResult holds the metadata of a stored upload.
type UploadResult struct {
	MimeType string
	Size     int64
	SHA256   string
	BlobKey  string
}

// Store is the persistence the vault consumes. Implementations set
// timestamps from one clock reading per transaction and keep ID when it is
// set. Reads through GetFile are scoped to a workspace: a file of another
// workspace is NOT_FOUND.
type Store interface {
	// CreateFile inserts f as pending together with job, the expiry job
	// that removes it if no upload arrives, in one transaction. It sets
	// CreatedAt.
	CreateFile(ctx context.Context, f *File, job *queue.Job) error
	// GetFile returns a file of the workspace, pending or uploaded.
	GetFile(ctx context.Context, workspaceID, id string) (*File, error)
	// LookupFile returns a file by id alone, for the signed upload, which
	// carries no principal.
	LookupFile(ctx context.Context, id string) (*File, error)
	// MarkUploaded moves a pending file to uploaded with the stored bytes'
	// metadata, setting UploadedAt, and returns it. It is the atomic claim
	// of an upload: a file that is no longer pending is CONFLICT, a missing
	// one NOT_FOUND.
	MarkUploaded(ctx context.Context, id string, r UploadResult) (*File, error)
	// DeleteFile removes a file of the workspace and returns what it
	// removed, so that the caller can delete its bytes.
	DeleteFile(ctx context.Context, workspaceID, id string) (*File, error)
	// DeletePendingFile removes a file only while it is pending and returns
	// it; an uploaded file is CONFLICT and is left alone.
	DeletePendingFile(ctx context.Context, id string) (*File, error)
	// ListFiles returns one page of the files f selects, newest first
	// (files created at the same instant: the later created first), and
	// how many f selects in all, read in one snapshot. f.Limit and
	// f.Offset are used as given.
	ListFiles(ctx context.Context, f FileFilter) ([]*File, int, error)
	// UploadSecret returns the 32-byte secret that signs upload URLs. It is
	// created at random on first use and stored, so that it survives
	// restarts and is shared by every process on the same data.
	UploadSecret(ctx context.Context) ([]byte, error)
}

// FileFilter selects the files of a workspace to list: those in Status
// and created by CreatedBy (each when not empty), a page of Limit files
// after the first Offset.
type FileFilter struct {
	WorkspaceID string
	Status      string
	CreatedBy   string
	Limit       int
	Offset      int
}

// PrefixDeleter is implemented by Blobs that can remove every key with a
// prefix. The expiry job uses it to remove bytes an interrupted upload
// stored but never recorded; Blobs without it leave those behind.
type PrefixDeleter interface {
	DeletePrefix(ctx context.Context, prefix string) error
}

// Blobs stores file bytes under opaque keys.
type Blobs interface {
	// Put stores r under key, reading at most limit bytes: a longer body is
	// PAYLOAD_TOO_LARGE and nothing is left behind. It returns the size and
	// the hex sha256 of the bytes. A Put is atomic: Open sees the whole
	// bytes or nothing.
	Put(ctx context.Context, key string, r io.Reader, limit int64) (size int64, sha256 string, err error)
	// Open returns the bytes stored under key; a missing key is NOT_FOUND.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
