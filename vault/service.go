package vault

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Options wire a Service. Store and Blobs are required.
type Options struct {
	// Store holds the file records and the signing secret.
	Store Store
	// Blobs holds the bytes.
	Blobs Blobs
	// BaseURL prefixes upload URLs, for example "http://127.0.0.1:8080";
	// a trailing slash is ignored.
	BaseURL string
	// URLLifetime is how long an upload URL works; zero means
	// DefaultURLLifetime.
	URLLifetime time.Duration
	// MaxSize bounds an upload, in bytes; zero means DefaultMaxSize.
	MaxSize int64
	// Now is the clock; nil means time.Now.
	Now canvas.Clock
	// NewID returns file ids; nil means random UUIDs.
	NewID func() string
}

// Service is the file vault: it issues signed, expiring upload URLs, takes
// the bytes, serves metadata and bytes inside the uploader's workspace, and
// removes files. Methods other than Upload read the Principal from their
// context: editors create and delete files, viewers read them. A file of
// another workspace is NOT_FOUND, never FORBIDDEN. A file belongs to no
// project: a project-restricted principal reaches only the files it
// uploaded, and any other file of its workspace is FORBIDDEN to it.
type Service struct {
	store    Store
	blobs    Blobs
	baseURL  string
	lifetime time.Duration
	maxSize  int64
	now      func() time.Time
	newID    func() string
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	s := &Service{store: opts.Store, blobs: opts.Blobs, baseURL: strings.TrimRight(opts.BaseURL, "/"),
		lifetime: opts.URLLifetime, maxSize: opts.MaxSize, now: opts.Now, newID: opts.NewID}
	if s.lifetime <= 0 {
		s.lifetime = DefaultURLLifetime
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxSize
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = uuid.NewString
	}
	return s
}

// MaxSize returns the largest upload accepted, in bytes.
func (s *Service) MaxSize() int64 { return s.maxSize }

// CreateFileParams are the fields of a new file. The JSON names are those
// of the request body of POST /v3/files.
type CreateFileParams struct {
	// FileName is required: 1 to 255 characters, without path separators
	// or control characters.
	FileName string `json:"fileName"`
}

// Upload is the answer to CreateFile: the new file's id and the signed URL
// its bytes go to before ExpiresAt.
type Upload struct {
	ID        string    `json:"id"`
	UploadURL string    `json:"uploadUrl"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// CreateFile records a pending file in the principal's workspace and
// returns its upload URL. The expiry job that removes the file if no upload
// arrives is written with it, due one minute after the URL expires. It
// requires the editor role.
func (s *Service) CreateFile(ctx context.Context, params CreateFileParams) (*Upload, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if err := ValidateFileName(params.FileName); err != nil {
		return nil, canvas.Invalid("The file name is invalid.", canvas.Detail{Path: "/json/fileName", Message: err.Error()})
	}
	secret, err := s.store.UploadSecret(ctx)
	if err != nil {
		return nil, err
	}
	expires := s.now().Add(s.lifetime).Truncate(time.Second)
	f := &File{ID: s.newID(), FileName: params.FileName, Status: StatusPending,
		WorkspaceID: p.WorkspaceID, CreatedBy: p.Actor(), ExpiresAt: expires}
	job := &queue.Job{WorkspaceID: p.WorkspaceID, Kind: JobKindExpire, RefID: f.ID,
		RunAt: expires.Add(time.Minute)}
	if err := s.store.CreateFile(ctx, f, job); err != nil {
		return nil, err
	}
	return &Upload{ID: f.ID, UploadURL: s.baseURL + SignedPath(secret, f.ID, expires), ExpiresAt: expires}, nil
}

// GetFile returns the metadata of a file of the principal's workspace,
// pending or uploaded. It requires the viewer role.
func (s *Service) GetFile(ctx context.Context, id string) (*File, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	f, err := s.store.GetFile(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if err := reachFile(p, f); err != nil {
		return nil, err
	}
	return f, nil
}

// Open returns the metadata and the bytes of an uploaded file of the
// principal's workspace; the caller closes the reader. A file of another
// workspace, an unknown file and a file never uploaded are all NOT_FOUND.
// It requires the viewer role.
func (s *Service) Open(ctx context.Context, id string) (*File, io.ReadCloser, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.store.GetFile(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, nil, err
	}
	if err := reachFile(p, f); err != nil {
		return nil, nil, err
	}
	if !f.Uploaded() {
		return nil, nil, canvas.NotFound("file")
	}
	rc, err := s.blobs.Open(ctx, f.BlobKey)
	if err != nil {
		return nil, nil, err
	}
	return f, rc, nil
}

// UploadParams describe one byte upload to a signed URL.
type UploadParams struct {
	// ID is the file id of the URL's path.
	ID string
	// Expires and Signature are the URL's query parameters, as sent.
	Expires   string
	Signature string
	// ContentType is the request's Content-Type header, possibly empty.
	ContentType string
	// Length is the body's declared length, or -1 when unknown; a declared
	// length over the limit is refused before any byte is read.
	Length int64
	// Body is the file's bytes.
	Body io.Reader
}

// Upload stores the bytes of a pending file. It needs no principal: the
// signed URL is the authority. An expired or tampered URL is FORBIDDEN, an
// unknown file NOT_FOUND, a file already uploaded CONFLICT, a body over the
// size limit PAYLOAD_TOO_LARGE (nothing is kept), and a malformed
// Content-Type VALIDATION. The MIME type is the Content-Type's media type,
// or is sniffed from the bytes when the header is missing or
// application/octet-stream. Of two concurrent uploads of one id exactly one
// wins; the other's bytes are removed and it is CONFLICT.
func (s *Service) Upload(ctx context.Context, params UploadParams) (*File, error) {
	secret, err := s.store.UploadSecret(ctx)
	if err != nil {
		return nil, err
	}
	if err := Verify(secret, params.ID, params.Expires, params.Signature, s.now()); err != nil {
		return nil, err
	}
	f, err := s.store.LookupFile(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	if f.Uploaded() {
		return nil, canvas.Errorf(canvas.ECONFLICT, "The file was already uploaded.")
	}
	if params.Length > s.maxSize {
		return nil, canvas.Errorf(canvas.EPAYLOADTOOLARGE, "The file is larger than %d bytes.", s.maxSize)
	}
	declared, err := parseContentType(params.ContentType)
	if err != nil {
		return nil, err
	}
	body, mimeType, err := sniff(params.Body, declared)
	if err != nil {
		return nil, err
	}
	key := blobPrefix(f.ID) + uuid.NewString()
	size, sum, err := s.blobs.Put(ctx, key, body, s.maxSize)
	if err != nil {
		return nil, err
	}
	up, err := s.store.MarkUploaded(ctx, f.ID, UploadResult{MimeType: mimeType, Size: size, SHA256: sum, BlobKey: key})
	if err != nil {
		// The claim was lost (a concurrent upload, a delete or the expiry
		// job): these bytes belong to no record.
		if derr := s.blobs.Delete(context.WithoutCancel(ctx), key); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	return up, nil
}

// DeleteFile removes a file of the principal's workspace and its bytes. It
// requires the editor role.
func (s *Service) DeleteFile(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return err
	}
	if p.Restricted() {
		f, err := s.store.GetFile(ctx, p.WorkspaceID, id)
		if err != nil {
			return err
		}
		if err := reachFile(p, f); err != nil {
			return err
		}
	}
	f, err := s.store.DeleteFile(ctx, p.WorkspaceID, id)
	if err != nil {
		return err
	}
	if f.BlobKey != "" {
		return s.blobs.Delete(ctx, f.BlobKey)
	}
	return nil
}

// blobPrefix starts the blob key of every upload of file id; each upload
// writes under its own key, so that a losing concurrent upload removes only
// its own bytes.
func blobPrefix(id string) string { return id + "-" }

// HandleExpireJob executes a vault.expire job: it removes the file the job
// serves if it is still pending, together with any bytes an interrupted
// upload stored for it (when the Blobs is a PrefixDeleter), and leaves an
// uploaded or already removed file alone. A worker registers it for
// JobKindExpire.
func (s *Service) HandleExpireJob(ctx context.Context, j *queue.Job) error {
	f, err := s.store.DeletePendingFile(ctx, j.RefID)
	switch canvas.ErrorCode(err) {
	case "":
	case canvas.ECONFLICT, canvas.ENOTFOUND:
		return nil
	default:
		return err
	}
	if pd, ok := s.blobs.(PrefixDeleter); ok {
		return pd.DeletePrefix(ctx, blobPrefix(f.ID))
	}
	return nil
}
