package vault_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/vault/vaulttest"
)

// MustFSBlobs returns blob storage in a fresh temporary directory, and the
// directory.
func MustFSBlobs(tb testing.TB) (*vault.FSBlobs, string) {
	tb.Helper()
	dir := tb.TempDir()
	b, err := vault.NewFSBlobs(dir)
	require.NoError(tb, err)
	return b, dir
}

// dirNames lists the names in dir.
func dirNames(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestFSBlobs_Put(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		data := []byte("hello, vault")
		size, sum, err := b.Put(ctx, "k1", bytes.NewReader(data), 1024)
		require.NoError(t, err)
		want := sha256.Sum256(data)
		assert.Equal(t, int64(len(data)), size)
		assert.Equal(t, hex.EncodeToString(want[:]), sum)
		assert.Equal(t, []string{"k1"}, dirNames(t, dir), "only the blob remains, no temporary file")

		rc, err := b.Open(ctx, "k1")
		require.NoError(t, err)
		defer rc.Close()
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		assert.Equal(t, data, got)
	})
	t.Run("ExactLimit", func(t *testing.T) {
		b, _ := MustFSBlobs(t)
		size, _, err := b.Put(ctx, "k", strings.NewReader("12345"), 5)
		require.NoError(t, err)
		assert.Equal(t, int64(5), size)
	})
	t.Run("TooLarge", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		_, _, err := b.Put(ctx, "k", strings.NewReader("123456"), 5)
		require.Error(t, err)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
		assert.Empty(t, dirNames(t, dir), "nothing is left behind")
		_, err = b.Open(ctx, "k")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("ReadError", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		r := io.MultiReader(strings.NewReader("partial"), iotestErrReader{})
		_, _, err := b.Put(ctx, "k", r, 1024)
		require.Error(t, err)
		assert.Empty(t, dirNames(t, dir), "the temporary file is removed")
	})
	t.Run("Cancelled", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := b.Put(cctx, "k", strings.NewReader("data"), 1024)
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, dirNames(t, dir))
	})
	t.Run("BadKey", func(t *testing.T) {
		b, _ := MustFSBlobs(t)
		for _, key := range []string{"", "../escape", "a/b", ".hidden", ".."} {
			_, _, err := b.Put(ctx, key, strings.NewReader("x"), 10)
			assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "key %q", key)
		}
	})
}

func TestFSBlobs_Delete(t *testing.T) {
	ctx := context.Background()
	b, dir := MustFSBlobs(t)
	_, _, err := b.Put(ctx, "k", strings.NewReader("x"), 10)
	require.NoError(t, err)
	require.NoError(t, b.Delete(ctx, "k"))
	assert.Empty(t, dirNames(t, dir))
	_, err = b.Open(ctx, "k")
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	assert.NoError(t, b.Delete(ctx, "k"), "deleting a missing key is not an error")
}

func TestFSBlobs_Open(t *testing.T) {
	b, _ := MustFSBlobs(t)
	_, err := b.Open(context.Background(), "missing")
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
}

// iotestErrReader fails every read.
type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestFSBlobs_DeletePrefix(t *testing.T) {
	ctx := context.Background()
	b, dir := MustFSBlobs(t)
	for _, key := range []string{"f1-a", "f1-b", "f2-a"} {
		_, _, err := b.Put(ctx, key, strings.NewReader(key), 10)
		require.NoError(t, err)
	}
	require.NoError(t, b.DeletePrefix(ctx, "f1-"))
	assert.Equal(t, []string{"f2-a"}, dirNames(t, dir))
	for _, bad := range []string{"", "*", ".upload-", "../f2"} {
		require.NoError(t, b.DeletePrefix(ctx, bad))
	}
	assert.Equal(t, []string{"f2-a"}, dirNames(t, dir), "a prefix that is not a plain name removes nothing")
}

func TestNewFSBlobs_RemovesStaleTemp(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".upload-stale")
	fresh := filepath.Join(dir, ".upload-fresh")
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(fresh, []byte("x"), 0o600))
	old := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	_, err := vault.NewFSBlobs(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{".upload-fresh"}, dirNames(t, dir), "an upload in progress is left alone")
}

func TestFSBlobs_Conformance(t *testing.T) {
	vaulttest.RunBlobs(t, func(t *testing.T) vault.Blobs {
		b, _ := MustFSBlobs(t)
		return b
	})
}
