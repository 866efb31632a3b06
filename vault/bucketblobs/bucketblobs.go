// Package bucketblobs keeps the bytes of vault files in a bucket of
// gocloud.dev/blob: any S3-compatible object store (AWS S3, MinIO, Ceph,
// R2, ...) through an "s3://" URL, or any other bucket an embedder opens
// itself. It is a package of its own so that the vault, and everything
// that imports it, does not depend on a cloud SDK.
//
// Every replica of a server that reads and writes one bucket reads every
// upload, which the file system cannot offer once replicas run on several
// machines.
package bucketblobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"

	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Blobs stores file bytes as objects of one bucket, each under its key. A
// Put streams to the bucket, counting and hashing as it goes, and aborts the
// write once the size limit is passed or the body fails, so that an object
// is stored whole or not at all (an S3 PUT, or the completion of a
// multipart upload, is atomic).
type Blobs struct {
	bucket *blob.Bucket
}

var (
	_ vault.Blobs         = (*Blobs)(nil)
	_ vault.PrefixDeleter = (*Blobs)(nil)
)

// New returns blob storage in bucket. Close does not close the bucket: its
// opener does.
func New(bucket *blob.Bucket) *Blobs { return &Blobs{bucket: bucket} }

// Bucket is blob storage opened from a URL; Close closes its bucket.
type Bucket struct {
	*Blobs
}

// Close closes the bucket.
func (b *Bucket) Close() error { return b.bucket.Close() }

// Open opens the bucket of an "s3://" URL, as gocloud.dev/blob/s3blob reads
// it: the host is the bucket, and the query sets region, endpoint (an
// S3-compatible service), use_path_style, prefix (a key prefix inside the
// bucket), and the rest of gocloud.dev/aws's parameters. Credentials come
// from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, a shared profile, a role). The bucket must exist:
// Open checks that it answers.
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob URL: %w", err)
	}
	if u.Scheme != s3blob.Scheme || u.Host == "" {
		return nil, fmt.Errorf("blob URL %q: want s3://BUCKET?region=...[&endpoint=URL]", u.Redacted())
	}
	var opener s3blob.URLOpener
	bucket, err := opener.OpenBucketURL(ctx, withoutPrefix(u))
	if err != nil {
		return nil, fmt.Errorf("open bucket %q: %w", u.Host, err)
	}
	if p := u.Query().Get("prefix"); p != "" {
		bucket = blob.PrefixedBucket(bucket, p)
	}
	ok, err := bucket.IsAccessible(ctx)
	if err == nil && !ok {
		err = errors.New("the bucket does not exist")
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open bucket %q: %w", u.Host, err), bucket.Close())
	}
	return &Bucket{New(bucket)}, nil
}

// withoutPrefix returns u without its prefix parameter, which the bucket
// opener would refuse.
func withoutPrefix(u *url.URL) *url.URL {
	c := *u
	q := c.Query()
	q.Del("prefix")
	c.RawQuery = q.Encode()
	return &c
}

// Put implements vault.Blobs.
func (b *Blobs) Put(ctx context.Context, key string, r io.Reader, limit int64) (size int64, sum string, err error) {
	if key == "" {
		return 0, "", canvas.NotFound("file")
	}
	// Cancelling the writer's context before Close aborts the write: no
	// object is created.
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	w, err := b.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(ctxReader{ctx, r}, limit+1))
	if err == nil && n > limit {
		err = canvas.Errorf(canvas.EPAYLOADTOOLARGE, "The file is larger than %d bytes.", limit)
	}
	if err != nil {
		abort()
		_ = w.Close() // reports the abort
		return 0, "", err
	}
	if err := w.Close(); err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Open implements vault.Blobs. The reader streams from the bucket.
func (b *Blobs) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if key == "" {
		return nil, canvas.NotFound("file")
	}
	r, err := b.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, canvas.NotFound("file")
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Delete implements vault.Blobs.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	if err := b.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

// DeletePrefix implements vault.PrefixDeleter: it removes every object
// whose key starts with prefix (the uploads of one file, a handful at
// most). An empty prefix removes nothing.
func (b *Blobs) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return nil
	}
	it := b.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.IsDir {
			continue
		}
		if err := b.Delete(ctx, obj.Key); err != nil {
			return err
		}
	}
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
