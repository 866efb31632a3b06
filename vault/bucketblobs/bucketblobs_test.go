package bucketblobs_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/s3test"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/vault/bucketblobs"
	"github.com/promptcanvas/promptcanvas/vault/vaulttest"
)

// MustOpen opens the bucket of url and registers its Close.
func MustOpen(t *testing.T, url string) *bucketblobs.Bucket {
	t.Helper()
	b, err := bucketblobs.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return b
}

// TestBlobs runs the blob conformance suite against an S3-compatible
// server speaking the S3 wire protocol, each subtest in a bucket of its own.
func TestBlobs(t *testing.T) {
	s3test.SetCredentials(t)
	srv := s3test.Start(t)
	var n atomic.Int64
	vaulttest.RunBlobs(t, func(t *testing.T) vault.Blobs {
		name := fmt.Sprintf("bucket-%d", n.Add(1))
		srv.CreateBucket(t, name)
		return MustOpen(t, srv.URL(name))
	})
}

func TestOpen(t *testing.T) {
	s3test.SetCredentials(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "files")
	ctx := context.Background()

	t.Run("Prefix", func(t *testing.T) {
		inner := MustOpen(t, srv.URL("files")+"&prefix=canvas/")
		whole := MustOpen(t, srv.URL("files"))
		_, _, err := inner.Put(ctx, "f1-u1", strings.NewReader("x"), 10)
		require.NoError(t, err)
		rc, err := whole.Open(ctx, "canvas/f1-u1")
		require.NoError(t, err, "the key is stored under the prefix")
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		assert.Equal(t, "x", string(got))
		_, err = whole.Open(ctx, "f1-u1")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("MissingBucket", func(t *testing.T) {
		_, err := bucketblobs.Open(ctx, srv.URL("nope"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"nope"`)
	})
	t.Run("NotS3", func(t *testing.T) {
		for _, u := range []string{"gs://files", "file:///tmp/files", "s3://", "files", "postgres://db"} {
			_, err := bucketblobs.Open(ctx, u)
			require.Error(t, err, u)
			assert.Contains(t, err.Error(), "s3://BUCKET", u)
		}
	})
	t.Run("UnknownParameter", func(t *testing.T) {
		_, err := bucketblobs.Open(ctx, srv.URL("files")+"&colour=blue")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "colour")
	})
}
