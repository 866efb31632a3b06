package vault_test

import (
	"context"
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
	"github.com/promptcanvas/promptcanvas/vault/blobtest"
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

func TestFSBlobs(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) vault.Blobs {
		b, _ := MustFSBlobs(t)
		return b
	})
}

// TestFSBlobs_NothingLeftBehind checks what the conformance suite cannot
// see: no temporary file stays in the directory, whether a Put succeeds or
// fails.
func TestFSBlobs_NothingLeftBehind(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		_, _, err := b.Put(ctx, "k1", strings.NewReader("hello, vault"), 1024)
		require.NoError(t, err)
		assert.Equal(t, []string{"k1"}, dirNames(t, dir), "only the blob remains, no temporary file")
	})
	t.Run("TooLarge", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		_, _, err := b.Put(ctx, "k", strings.NewReader("123456"), 5)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, canvas.ErrorCode(err))
		assert.Empty(t, dirNames(t, dir))
	})
	t.Run("ReadError", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		r := io.MultiReader(strings.NewReader("partial"), iotestErrReader{})
		_, _, err := b.Put(ctx, "k", r, 1024)
		require.Error(t, err)
		assert.Empty(t, dirNames(t, dir), "the temporary file is removed")
	})
	t.Run("Deleted", func(t *testing.T) {
		b, dir := MustFSBlobs(t)
		_, _, err := b.Put(ctx, "k", strings.NewReader("x"), 10)
		require.NoError(t, err)
		require.NoError(t, b.Delete(ctx, "k"))
		assert.Empty(t, dirNames(t, dir))
	})
}

func TestFSBlobs_BadKey(t *testing.T) {
	ctx := context.Background()
	b, _ := MustFSBlobs(t)
	for _, key := range []string{"", "../escape", "a/b", ".hidden", ".."} {
		_, _, err := b.Put(ctx, key, strings.NewReader("x"), 10)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "key %q", key)
	}
}

// iotestErrReader fails every read.
type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestFSBlobs_DeletePrefix_NotAName(t *testing.T) {
	ctx := context.Background()
	b, dir := MustFSBlobs(t)
	_, _, err := b.Put(ctx, "f2-a", strings.NewReader("x"), 10)
	require.NoError(t, err)
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
