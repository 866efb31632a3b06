// Package blobtest is the conformance suite of vault.Blobs: every
// implementation (the file system, a database, an S3-compatible bucket)
// passes it by calling Run from a test of a few lines.
//
// Each behaviour is a parallel subtest on fresh storage, named after what it
// checks; errors are checked by code with canvas.ErrorCode.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Run runs the whole suite. newBlobs returns fresh, empty blob storage and
// registers whatever it must release with t.Cleanup.
func Run(t *testing.T, newBlobs func(t *testing.T) vault.Blobs) {
	run := func(name string, fn func(t *testing.T, ctx context.Context, b vault.Blobs)) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, context.Background(), newBlobs(t))
		})
	}
	run("PutOpen", testPutOpen)
	run("PutEmpty", testPutEmpty)
	run("PutExactLimit", testPutExactLimit)
	run("PutTooLarge", testPutTooLarge)
	run("PutLarge", testPutLarge)
	run("PutReadError", testPutReadError)
	run("PutCancelled", testPutCancelled)
	run("PutConcurrent", testPutConcurrent)
	run("OpenMissing", testOpenMissing)
	run("Delete", testDelete)
	run("DeletePrefix", testDeletePrefix)
}

// key returns a key shaped like the vault's: the file id, a dash and the
// upload's own id.
func key(file, upload string) string { return file + "-" + upload }

// requireCode fails unless err carries the error code want.
func requireCode(t *testing.T, want string, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, canvas.ErrorCode(err), "error: %v", err)
}

// readAll opens key and returns its bytes.
func readAll(t *testing.T, ctx context.Context, b vault.Blobs, key string) []byte {
	t.Helper()
	rc, err := b.Open(ctx, key)
	require.NoError(t, err)
	defer rc.Close()
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	return got
}

// requireMissing fails unless key is NOT_FOUND.
func requireMissing(t *testing.T, ctx context.Context, b vault.Blobs, key string) {
	t.Helper()
	rc, err := b.Open(ctx, key)
	if err == nil {
		rc.Close()
	}
	requireCode(t, canvas.ENOTFOUND, err)
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func testPutOpen(t *testing.T, ctx context.Context, b vault.Blobs) {
	data := []byte("hello, vault")
	k := key("f1", "u1")
	size, got, err := b.Put(ctx, k, bytes.NewReader(data), 1024)
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), size)
	assert.Equal(t, sum(data), got)
	assert.Equal(t, data, readAll(t, ctx, b, k))
	assert.Equal(t, data, readAll(t, ctx, b, k), "a blob reads again")
}

func testPutEmpty(t *testing.T, ctx context.Context, b vault.Blobs) {
	k := key("f1", "u1")
	size, got, err := b.Put(ctx, k, strings.NewReader(""), 1024)
	require.NoError(t, err)
	assert.Zero(t, size)
	assert.Equal(t, sum(nil), got)
	assert.Empty(t, readAll(t, ctx, b, k))
}

func testPutExactLimit(t *testing.T, ctx context.Context, b vault.Blobs) {
	k := key("f1", "u1")
	size, _, err := b.Put(ctx, k, strings.NewReader("12345"), 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), size)
	assert.Equal(t, []byte("12345"), readAll(t, ctx, b, k))
}

func testPutTooLarge(t *testing.T, ctx context.Context, b vault.Blobs) {
	k := key("f1", "u1")
	_, _, err := b.Put(ctx, k, strings.NewReader("123456"), 5)
	requireCode(t, canvas.EPAYLOADTOOLARGE, err)
	requireMissing(t, ctx, b, k)
}

// testPutLarge stores more than one part of a multipart upload (5 MiB on
// S3) and more than any single read or write buffer.
func testPutLarge(t *testing.T, ctx context.Context, b vault.Blobs) {
	data := make([]byte, 6<<20+123)
	_, err := rand.Read(data)
	require.NoError(t, err)
	k := key("f1", "u1")
	size, got, err := b.Put(ctx, k, bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), size)
	assert.Equal(t, sum(data), got)
	back := readAll(t, ctx, b, k)
	require.Len(t, back, len(data))
	assert.True(t, bytes.Equal(data, back), "the bytes read back are the bytes stored")
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func testPutReadError(t *testing.T, ctx context.Context, b vault.Blobs) {
	k := key("f1", "u1")
	_, _, err := b.Put(ctx, k, io.MultiReader(strings.NewReader("partial"), errReader{}), 1024)
	require.Error(t, err)
	requireMissing(t, ctx, b, k)
}

func testPutCancelled(t *testing.T, ctx context.Context, b vault.Blobs) {
	k := key("f1", "u1")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err := b.Put(cctx, k, strings.NewReader("data"), 1024)
	require.ErrorIs(t, err, context.Canceled)
	requireMissing(t, ctx, b, k)
}

func testPutConcurrent(t *testing.T, ctx context.Context, b vault.Blobs) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			data := fmt.Sprintf("upload %d", i)
			_, _, errs[i] = b.Put(ctx, key("f1", fmt.Sprint(i)), strings.NewReader(data), 1024)
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("upload %d", i), string(readAll(t, ctx, b, key("f1", fmt.Sprint(i)))))
	}
}

func testOpenMissing(t *testing.T, ctx context.Context, b vault.Blobs) {
	requireMissing(t, ctx, b, key("missing", "u1"))
}

func testDelete(t *testing.T, ctx context.Context, b vault.Blobs) {
	k, other := key("f1", "u1"), key("f2", "u1")
	for _, k := range []string{k, other} {
		_, _, err := b.Put(ctx, k, strings.NewReader(k), 1024)
		require.NoError(t, err)
	}
	require.NoError(t, b.Delete(ctx, k))
	requireMissing(t, ctx, b, k)
	assert.NoError(t, b.Delete(ctx, k), "deleting a missing key is not an error")
	assert.Equal(t, []byte(other), readAll(t, ctx, b, other), "other keys are left alone")
}

// testDeletePrefix checks implementations that are a vault.PrefixDeleter;
// it is skipped for the others.
func testDeletePrefix(t *testing.T, ctx context.Context, b vault.Blobs) {
	pd, ok := b.(vault.PrefixDeleter)
	if !ok {
		t.Skip("not a vault.PrefixDeleter")
	}
	keys := []string{key("f1", "a"), key("f1", "b"), key("f10", "a"), key("f2", "a")}
	for _, k := range keys {
		_, _, err := b.Put(ctx, k, strings.NewReader(k), 1024)
		require.NoError(t, err)
	}
	require.NoError(t, pd.DeletePrefix(ctx, "f1-"))
	requireMissing(t, ctx, b, keys[0])
	requireMissing(t, ctx, b, keys[1])
	assert.Equal(t, []byte(keys[2]), readAll(t, ctx, b, keys[2]), "f10-a does not start with f1-")
	assert.Equal(t, []byte(keys[3]), readAll(t, ctx, b, keys[3]))
	require.NoError(t, pd.DeletePrefix(ctx, "none-"), "a prefix without keys is not an error")
}
