package vault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// FSBlobs stores blobs as files in one directory. A Put streams into a
// temporary file in the same directory, counting and hashing as it goes,
// stops at the size limit (removing the temporary file), then fsyncs the
// file, renames it into place and fsyncs the directory, so that a blob is
// either whole on disk or absent.
type FSBlobs struct {
	dir string
}

var (
	_ Blobs         = (*FSBlobs)(nil)
	_ PrefixDeleter = (*FSBlobs)(nil)
)

// tempPrefix marks files being written; they are never valid keys.
const tempPrefix = ".upload-"

// staleTempAge is the age past which a temporary file is a crash's
// leftover rather than an upload in progress (the reference server reads
// a request for at most five minutes).
const staleTempAge = time.Hour

// NewFSBlobs returns blob storage in dir, creating the directory when it is
// missing, and removes temporary files an interrupted process left behind
// more than an hour ago.
func NewFSBlobs(dir string) (*FSBlobs, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	b := &FSBlobs{dir: dir}
	if err := b.removeStaleTemp(time.Now().Add(-staleTempAge)); err != nil {
		return nil, err
	}
	return b, nil
}

// removeStaleTemp removes the temporary files last written before cutoff.
func (b *FSBlobs) removeStaleTemp(cutoff time.Time) error {
	names, err := filepath.Glob(filepath.Join(b.dir, tempPrefix+"*"))
	if err != nil {
		return err
	}
	for _, name := range names {
		info, err := os.Stat(name)
		if err != nil || info.ModTime().After(cutoff) {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// path returns the file of key; a key that is not a plain file name is
// NOT_FOUND, so that no key reaches outside the directory.
func (b *FSBlobs) path(key string) (string, error) {
	if key == "" || key != filepath.Base(key) || strings.HasPrefix(key, ".") || strings.ContainsAny(key, `/\`) {
		return "", canvas.NotFound("file")
	}
	return filepath.Join(b.dir, key), nil
}

// Put implements Blobs.
func (b *FSBlobs) Put(ctx context.Context, key string, r io.Reader, limit int64) (size int64, sum string, err error) {
	dst, err := b.path(key)
	if err != nil {
		return 0, "", err
	}
	tmp, err := os.CreateTemp(b.dir, tempPrefix+"*")
	if err != nil {
		return 0, "", err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(ctxReader{ctx, r}, limit+1))
	if err != nil {
		return 0, "", err
	}
	if n > limit {
		return 0, "", canvas.Errorf(canvas.EPAYLOADTOOLARGE, "The file is larger than %d bytes.", limit)
	}
	if err = tmp.Sync(); err != nil {
		return 0, "", err
	}
	if err = tmp.Close(); err != nil {
		return 0, "", err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return 0, "", err
	}
	if err := syncDir(b.dir); err != nil {
		os.Remove(dst)
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Open implements Blobs.
func (b *FSBlobs) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, canvas.NotFound("file")
	}
	return f, err
}

// Delete implements Blobs.
func (b *FSBlobs) Delete(_ context.Context, key string) error {
	p, err := b.path(key)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(b.dir)
}

// DeletePrefix removes every blob whose key starts with prefix: the bytes
// of an upload whose process stopped between storing them and recording
// them.
func (b *FSBlobs) DeletePrefix(_ context.Context, prefix string) error {
	if prefix == "" || strings.HasPrefix(prefix, ".") || strings.ContainsAny(prefix, `/\*?[`) {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(b.dir, prefix+"*"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a directory so that a rename or removal in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ctxReader stops reading once its context is done, so that an abandoned
// upload does not keep streaming.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
