// Package vaulttest is the conformance suite of vault.Blobs: every blob
// storage (FSBlobs, the Postgres store's blobs, an S3 bucket) passes it by
// calling RunBlobs from a test of a few lines.
package vaulttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// RunBlobs runs the suite. newBlobs returns an empty blob storage of its
// own and registers what closes it with t.Cleanup. Keys are plain names
// (letters, digits, '-'), as the vault makes them.
func RunBlobs(t *testing.T, newBlobs func(t *testing.T) vault.Blobs) {
	ctx := context.Background()
	run := func(name string, fn func(t *testing.T, b vault.Blobs)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, newBlobs(t))
		})
	}
	run("PutOpenRoundTrip", func(t *testing.T, b vault.Blobs) {
		data := []byte("hello, vault")
		size, sum, err := b.Put(ctx, "k1", bytes.NewReader(data), 1024)
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), size)
		assert.Equal(t, sha(data), sum)
		assert.Equal(t, data, read(t, b, "k1"))
	})
	run("Empty", func(t *testing.T, b vault.Blobs) {
		size, sum, err := b.Put(ctx, "empty", bytes.NewReader(nil), 1024)
		require.NoError(t, err)
		assert.Zero(t, size)
		assert.Equal(t, sha(nil), sum)
		assert.Empty(t, read(t, b, "empty"), "an empty blob exists and reads empty")
	})
	run("Large", func(t *testing.T, b vault.Blobs) {
		// Larger than any chunk or buffer a storage is likely to use, and
		// not a multiple of a power of two.
		data := make([]byte, 5<<20+12345)
		for i := range data {
			data[i] = byte(i*7 + i/251)
		}
		size, sum, err := b.Put(ctx, "large", bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), size)
		assert.Equal(t, sha(data), sum)
		got := read(t, b, "large")
		require.Equal(t, len(data), len(got))
		assert.True(t, bytes.Equal(data, got), "the bytes read back are the bytes written")
	})
	run("ExactLimit", func(t *testing.T, b vault.Blobs) {
		size, _, err := b.Put(ctx, "k", strings.NewReader("12345"), 5)
		require.NoError(t, err)
		assert.Equal(t, int64(5), size)
	})
	run("TooLargeLeavesNothing", func(t *testing.T, b vault.Blobs) {
		_, _, err := b.Put(ctx, "k", strings.NewReader("123456"), 5)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
		_, err = b.Open(ctx, "k")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	run("ReadErrorLeavesNothing", func(t *testing.T, b vault.Blobs) {
		r := io.MultiReader(strings.NewReader("partial"), errReader{})
		_, _, err := b.Put(ctx, "k", r, 1024)
		require.Error(t, err)
		_, err = b.Open(ctx, "k")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	run("CancelledLeavesNothing", func(t *testing.T, b vault.Blobs) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := b.Put(cctx, "k", strings.NewReader("data"), 1024)
		require.ErrorIs(t, err, context.Canceled)
		_, err = b.Open(ctx, "k")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	run("PutReplaces", func(t *testing.T, b vault.Blobs) {
		_, _, err := b.Put(ctx, "k", strings.NewReader("first, longer"), 1024)
		require.NoError(t, err)
		_, _, err = b.Put(ctx, "k", strings.NewReader("second"), 1024)
		require.NoError(t, err)
		assert.Equal(t, "second", string(read(t, b, "k")))
	})
	run("FailedPutKeepsPrevious", func(t *testing.T, b vault.Blobs) {
		_, _, err := b.Put(ctx, "k", strings.NewReader("kept"), 1024)
		require.NoError(t, err)
		_, _, err = b.Put(ctx, "k", strings.NewReader("too long for the limit"), 5)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
		assert.Equal(t, "kept", string(read(t, b, "k")))
	})
	run("OpenMissing", func(t *testing.T, b vault.Blobs) {
		_, err := b.Open(ctx, "missing")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	run("Delete", func(t *testing.T, b vault.Blobs) {
		_, _, err := b.Put(ctx, "k", strings.NewReader("x"), 10)
		require.NoError(t, err)
		_, _, err = b.Put(ctx, "other", strings.NewReader("y"), 10)
		require.NoError(t, err)
		require.NoError(t, b.Delete(ctx, "k"))
		_, err = b.Open(ctx, "k")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
		assert.NoError(t, b.Delete(ctx, "k"), "deleting a missing key is not an error")
		assert.Equal(t, "y", string(read(t, b, "other")), "other keys stay")
	})
	run("DeletePrefix", func(t *testing.T, b vault.Blobs) {
		pd, ok := b.(vault.PrefixDeleter)
		if !ok {
			t.Skip("the storage is not a vault.PrefixDeleter")
		}
		for _, key := range []string{"f1-a", "f1-b", "f2-a"} {
			_, _, err := b.Put(ctx, key, strings.NewReader(key), 10)
			require.NoError(t, err)
		}
		require.NoError(t, pd.DeletePrefix(ctx, "f1-"))
		for _, key := range []string{"f1-a", "f1-b"} {
			_, err := b.Open(ctx, key)
			assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), key)
		}
		assert.Equal(t, "f2-a", string(read(t, b, "f2-a")))
		require.NoError(t, pd.DeletePrefix(ctx, ""), "an empty prefix removes nothing")
		assert.Equal(t, "f2-a", string(read(t, b, "f2-a")))
	})
}

// read returns the bytes stored under key.
func read(t *testing.T, b vault.Blobs, key string) []byte {
	t.Helper()
	rc, err := b.Open(context.Background(), key)
	require.NoError(t, err)
	defer func() { assert.NoError(t, rc.Close()) }()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	return data
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
