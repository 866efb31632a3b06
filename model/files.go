package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/netguard"
)

// File resolution defaults.
const (
	// DefaultFileMaxSize bounds the bytes of one file given to a model.
	DefaultFileMaxSize = 32 << 20
	// DefaultFileTimeout bounds the fetch of one public file, body included.
	DefaultFileTimeout = 30 * time.Second
)

// VaultScheme starts the address of a file uploaded to the vault:
// "vault://<file id>".
const VaultScheme = "vault://"

// FileRef is a file address rendered into a message: the variable that
// held it, the address as given ("vault://<id>" or a public http(s) URL),
// whether the variable allows multimodal input, and the span
// Content[Start:End] that stands for the file until it is resolved.
type FileRef struct {
	Variable   string `json:"variable"`
	URL        string `json:"url"`
	Multimodal bool   `json:"multimodal,omitempty"`
	Start      int    `json:"start"`
	End        int    `json:"end"`
}

// File is a resolved file sent to a model as a part of its message: an
// image part when Image is set (an image whose variable allows multimodal
// input), a file part otherwise. Text files never become parts: their
// content is inlined into the message text.
type File struct {
	Variable string
	Name     string
	MIMEType string
	Size     int64
	Data     []byte
	Image    bool
}

// Marker returns the deterministic text that stands for f in its message:
// "[file name=<name> type=<mime> size=<n>]". Control characters and "]" in
// the name are written as "_".
func (f *File) Marker() string {
	return fileMarker(f.Name, f.MIMEType, f.Size)
}

func fileMarker(name, mimeType string, size int64) string {
	name = strings.Map(func(r rune) rune {
		if r == ']' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	return "[file name=" + name + " type=" + mimeType + " size=" + strconv.FormatInt(size, 10) + "]"
}

// FileInfo is what the vault knows of a stored file.
type FileInfo struct {
	Name     string
	MIMEType string
	Size     int64
}

// FileOpener opens files uploaded to the vault. OpenFile returns the file of
// workspace workspaceID with id fileID and a reader of its bytes, which the
// caller closes; a file of another workspace, an unknown id or a file never
// uploaded is a NOT_FOUND error.
type FileOpener interface {
	OpenFile(ctx context.Context, workspaceID, fileID string) (FileInfo, io.ReadCloser, error)
}

// FileOpenerFunc adapts a function to FileOpener.
type FileOpenerFunc func(ctx context.Context, workspaceID, fileID string) (FileInfo, io.ReadCloser, error)

// OpenFile calls f.
func (f FileOpenerFunc) OpenFile(ctx context.Context, workspaceID, fileID string) (FileInfo, io.ReadCloser, error) {
	return f(ctx, workspaceID, fileID)
}

// FileOptions configure how file variables are resolved. The zero value
// refuses vault addresses and fetches public files through the SSRF guard
// with the defaults.
type FileOptions struct {
	// Vault opens vault:// files; nil makes every vault address a
	// VALIDATION error.
	Vault FileOpener
	// AllowPrivateNetworks lets public file URLs reach loopback, private and
	// link-local addresses (for local testing only).
	AllowPrivateNetworks bool
	// HTTPClient fetches public files; default
	// netguard.Client(AllowPrivateNetworks, Timeout), which checks every
	// resolved address when it dials and never follows redirects.
	HTTPClient *http.Client
	// Timeout bounds each public fetch; default DefaultFileTimeout.
	Timeout time.Duration
	// MaxSize bounds each file in bytes; default DefaultFileMaxSize.
	MaxSize int64
}

// FileResolver turns the file references of rendered messages into files a
// provider can send. It is safe for concurrent use.
type FileResolver struct {
	vault   FileOpener
	client  *http.Client
	timeout time.Duration
	maxSize int64
}

// NewFileResolver returns a resolver configured by opts.
func NewFileResolver(opts FileOptions) *FileResolver {
	fr := &FileResolver{vault: opts.Vault, client: opts.HTTPClient, timeout: opts.Timeout, maxSize: opts.MaxSize}
	if fr.timeout <= 0 {
		fr.timeout = DefaultFileTimeout
	}
	if fr.maxSize <= 0 {
		fr.maxSize = DefaultFileMaxSize
	}
	if fr.client == nil {
		fr.client = netguard.Client(opts.AllowPrivateNetworks, fr.timeout)
	}
	return fr
}

// HasFileRefs reports whether any of msgs carries a file reference.
func HasFileRefs(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].FileRefs) > 0 {
			return true
		}
	}
	return false
}

// Check verifies, without fetching anything, what can be known of msgs'
// file references before a run is accepted: every address is a vault://
// address or a public http(s) URL (VALIDATION at /json/variables/<name>
// otherwise), and every vault file exists in workspaceID and was uploaded
// (NOT_FOUND otherwise).
func (fr *FileResolver) Check(ctx context.Context, workspaceID string, msgs []Message) error {
	for i := range msgs {
		for _, ref := range msgs[i].FileRefs {
			id, vault, err := fr.address(ref)
			if err != nil {
				return err
			}
			if !vault {
				continue
			}
			_, rc, err := fr.openVault(ctx, workspaceID, ref, id)
			if err != nil {
				return err
			}
			_ = rc.Close()
		}
	}
	return nil
}

// Resolve returns a copy of msgs with every file reference resolved: its
// span replaced by the file's marker (a text file, text/* or
// application/json in UTF-8, followed on the next line by its content), its
// FileRefs cleared, and the other files in its Files; the rest of each
// message (tool calls, the call a tool message answers) is kept. Vault addresses are
// opened in workspaceID: one that does not resolve there is NOT_FOUND.
// Public URLs are fetched through the SSRF guard within the timeout and size
// limit; a refused address, a failed fetch, a non-2xx answer or a file over
// the limit is a VALIDATION error at /json/variables/<name> that says why.
// An address used several times is read once.
func (fr *FileResolver) Resolve(ctx context.Context, workspaceID string, msgs []Message) ([]Message, error) {
	out := make([]Message, len(msgs))
	cache := make(map[string]*fetched)
	for i := range msgs {
		m := msgs[i]
		out[i] = m
		out[i].FileRefs, out[i].Files = nil, slices.Clip(m.Files)
		if len(m.FileRefs) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, ref := range m.FileRefs {
			if ref.Start < last || ref.End < ref.Start || ref.End > len(m.Content) {
				return nil, canvas.Errorf(canvas.EINTERNAL, "A file reference of variable %q does not fit its message.", ref.Variable)
			}
			f := cache[ref.URL]
			if f == nil {
				var err error
				if f, err = fr.fetch(ctx, workspaceID, ref); err != nil {
					return nil, err
				}
				cache[ref.URL] = f
			}
			b.WriteString(m.Content[last:ref.Start])
			b.WriteString(fileMarker(f.name, f.mimeType, int64(len(f.data))))
			if f.text() {
				b.WriteByte('\n')
				b.Write(f.data)
			} else {
				out[i].Files = append(out[i].Files, File{Variable: ref.Variable, Name: f.name, MIMEType: f.mimeType,
					Size: int64(len(f.data)), Data: f.data, Image: ref.Multimodal && strings.HasPrefix(f.mimeType, "image/")})
			}
			last = ref.End
		}
		b.WriteString(m.Content[last:])
		out[i].Content = b.String()
	}
	return out, nil
}

// fetched is a file read for one Resolve call.
type fetched struct {
	name     string
	mimeType string
	data     []byte
}

// text reports whether f is inlined into its message as text.
func (f *fetched) text() bool {
	return (strings.HasPrefix(f.mimeType, "text/") || f.mimeType == "application/json") && utf8.Valid(f.data)
}

// address checks ref's address and returns the vault file id when it is a
// vault address.
func (fr *FileResolver) address(ref FileRef) (id string, vault bool, err error) {
	if rest, ok := strings.CutPrefix(ref.URL, VaultScheme); ok {
		if rest == "" {
			return "", true, fileInvalid(ref, "vault:// address without a file id")
		}
		return rest, true, nil
	}
	if _, err := netguard.CheckURL(ref.URL); err != nil {
		return "", false, fileInvalid(ref, "must be a public http(s) URL or a vault:// address")
	}
	return "", false, nil
}

// fetch reads the file ref addresses.
func (fr *FileResolver) fetch(ctx context.Context, workspaceID string, ref FileRef) (*fetched, error) {
	id, vault, err := fr.address(ref)
	if err != nil {
		return nil, err
	}
	if vault {
		info, rc, err := fr.openVault(ctx, workspaceID, ref, id)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		data, err := fr.readLimited(rc, ref)
		if err != nil {
			return nil, err
		}
		name := info.Name
		if name == "" {
			name = id
		}
		return &fetched{name: name, mimeType: mediaType(info.MIMEType, data), data: data}, nil
	}
	return fr.fetchPublic(ctx, ref)
}

// openVault opens vault file id for ref.
func (fr *FileResolver) openVault(ctx context.Context, workspaceID string, ref FileRef, id string) (FileInfo, io.ReadCloser, error) {
	if fr.vault == nil {
		return FileInfo{}, nil, fileInvalid(ref, "vault:// addresses are not served here")
	}
	info, rc, err := fr.vault.OpenFile(ctx, workspaceID, id)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return FileInfo{}, nil, &canvas.Error{Code: canvas.ENOTFOUND, Message: "file not found",
			Details: []canvas.Detail{{Path: variablePath(ref.Variable), Message: "vault file " + id + " not found"}}, Err: err}
	} else if err != nil {
		return FileInfo{}, nil, err
	}
	return info, rc, nil
}

// fetchPublic GETs a public file through the guarded client.
func (fr *FileResolver) fetchPublic(parent context.Context, ref FileRef) (*fetched, error) {
	ctx, cancel := context.WithTimeout(parent, fr.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref.URL, nil)
	if err != nil {
		return nil, fileInvalid(ref, "must be a public http(s) URL or a vault:// address")
	}
	resp, err := fr.client.Do(req)
	if err != nil {
		return nil, fr.fetchError(parent, ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fileInvalid(ref, fmt.Sprintf("fetching the file answered HTTP %d", resp.StatusCode))
	}
	if resp.ContentLength > fr.maxSize {
		return nil, fr.tooLarge(ref)
	}
	data, err := fr.readLimited(resp.Body, ref)
	if err != nil {
		if canvas.ErrorCode(err) == canvas.EINVALID {
			return nil, err
		}
		return nil, fr.fetchError(parent, ref, err)
	}
	return &fetched{name: publicName(req, resp), mimeType: mediaType(resp.Header.Get("Content-Type"), data), data: data}, nil
}

// fetchError explains why a public fetch failed. When parent is done (the
// caller went away) the error is returned as it is, for the caller to treat
// as such.
func (fr *FileResolver) fetchError(parent context.Context, ref FileRef, err error) error {
	msg := "fetching the file failed"
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		msg = "file URL resolves to an address that is not allowed (loopback, private or link-local network)"
	case parent.Err() != nil:
		return err
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) && timeout.Timeout():
		msg = fmt.Sprintf("fetching the file did not finish within %s", fr.timeout)
	}
	return &canvas.Error{Code: canvas.EINVALID, Message: "A file variable could not be resolved.", Err: err,
		Details: []canvas.Detail{{Path: variablePath(ref.Variable), Message: msg}}}
}

// readLimited reads r whole unless it holds more than the size limit.
func (fr *FileResolver) readLimited(r io.Reader, ref FileRef) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, fr.maxSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > fr.maxSize {
		return nil, fr.tooLarge(ref)
	}
	return data, nil
}

func (fr *FileResolver) tooLarge(ref FileRef) error {
	return fileInvalid(ref, fmt.Sprintf("file is larger than the limit of %d bytes", fr.maxSize))
}

// fileInvalid is the VALIDATION error of a file variable that cannot be
// resolved, for the reason msg.
func fileInvalid(ref FileRef, msg string) error {
	return canvas.Invalid("A file variable could not be resolved.",
		canvas.Detail{Path: variablePath(ref.Variable), Message: msg})
}

// mediaType returns the media type of header without parameters, in lower
// case, or the one sniffed from data when header is missing, malformed or
// application/octet-stream.
func mediaType(header string, data []byte) string {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil || mt == "" || mt == "application/octet-stream" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	return strings.ToLower(mt)
}

// publicName is the name of a fetched file: the Content-Disposition
// filename, else the last segment of the URL path, else the host.
func publicName(req *http.Request, resp *http.Response) string {
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return path.Base(params["filename"])
	}
	if base := path.Base(req.URL.Path); base != "/" && base != "." && base != "" {
		return base
	}
	return req.URL.Hostname()
}
