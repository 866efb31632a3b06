package credential_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/credential"
)

const (
	wsA, wsB   = "9a7c2b1e-0000-4000-8000-00000000000a", "9a7c2b1e-0000-4000-8000-00000000000b"
	idA, idB   = "5f1d0c3a-0000-4000-8000-00000000000a", "5f1d0c3a-0000-4000-8000-00000000000b"
	plainKeyAB = "sk-ant-api03-distinctive-plaintext"
)

func mustRing(t *testing.T, keys ...credential.Key) *credential.KeyRing {
	t.Helper()
	r, err := credential.NewKeyRing(keys...)
	require.NoError(t, err)
	return r
}

func TestKeyRing_SealOpen(t *testing.T) {
	t.Parallel()
	k1 := credential.NewKey()
	ring := mustRing(t, k1)
	s, err := ring.Seal(wsA, idA, []byte(plainKeyAB))
	require.NoError(t, err)
	assert.Equal(t, k1.ID, s.KeyID)
	assert.Len(t, s.Nonce, 12)
	assert.False(t, bytes.Contains(s.Ciphertext, []byte(plainKeyAB)))
	assert.Len(t, s.Ciphertext, len(plainKeyAB)+16, "the ciphertext and GCM's tag")

	again, err := ring.Seal(wsA, idA, []byte(plainKeyAB))
	require.NoError(t, err)
	assert.NotEqual(t, s.Nonce, again.Nonce, "a fresh random nonce per seal")
	assert.NotEqual(t, s.Ciphertext, again.Ciphertext)

	got, err := ring.Open(wsA, idA, s)
	require.NoError(t, err)
	assert.Equal(t, plainKeyAB, string(got))

	t.Run("OtherRowDoesNotOpen", func(t *testing.T) {
		for _, row := range [][2]string{{wsA, idB}, {wsB, idA}, {wsB, idB}} {
			_, err := ring.Open(row[0], row[1], s)
			assert.ErrorIs(t, err, credential.ErrOpen, "a ciphertext moved to %v", row)
		}
	})
	t.Run("AlteredDoesNotOpen", func(t *testing.T) {
		bad := s
		bad.Ciphertext = append([]byte(nil), s.Ciphertext...)
		bad.Ciphertext[0] ^= 1
		_, err := ring.Open(wsA, idA, bad)
		assert.ErrorIs(t, err, credential.ErrOpen)
	})
	t.Run("UnknownKeyDoesNotOpen", func(t *testing.T) {
		_, err := mustRing(t, credential.NewKey()).Open(wsA, idA, s)
		assert.ErrorIs(t, err, credential.ErrOpen)
		assert.NotContains(t, err.Error(), plainKeyAB)
	})
	t.Run("OlderKeyStillOpens", func(t *testing.T) {
		k2 := credential.NewKey()
		rotated := mustRing(t, k2, k1)
		assert.Equal(t, k2.ID, rotated.Current())
		got, err := rotated.Open(wsA, idA, s)
		require.NoError(t, err)
		assert.Equal(t, plainKeyAB, string(got))
		s2, err := rotated.Seal(wsA, idA, got)
		require.NoError(t, err)
		assert.Equal(t, k2.ID, s2.KeyID, "sealed under the current key")
	})
}

func TestNewKeyRing_Refuses(t *testing.T) {
	t.Parallel()
	_, err := credential.NewKeyRing()
	assert.Error(t, err)
	k := credential.NewKey()
	_, err = credential.NewKeyRing(k, k)
	assert.ErrorContains(t, err, "twice")
	k.ID = "has space"
	_, err = credential.NewKeyRing(k)
	assert.Error(t, err)
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	t.Run("CreateLoad", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secrets.key")
		ring, created, err := credential.LoadOrCreateKeyFile(path)
		require.NoError(t, err)
		assert.True(t, created)
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

		again, created, err := credential.LoadOrCreateKeyFile(path)
		require.NoError(t, err)
		assert.False(t, created, "an existing file is loaded, never replaced")
		assert.Equal(t, ring.Keys(), again.Keys())

		_, err = credential.CreateKeyFile(path)
		assert.ErrorIs(t, err, os.ErrExist)
	})
	t.Run("RefusesReadableByOthers", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secrets.key")
		_, err := credential.CreateKeyFile(path)
		require.NoError(t, err)
		for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
			require.NoError(t, os.Chmod(path, mode))
			_, err = credential.LoadKeyFile(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "chmod 600", "mode %o", mode)
		}
	})
	t.Run("RefusesMalformed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secrets.key")
		for _, body := range []string{"", "# only a comment\n", "k1 not-base64!\n", "k1 c2hvcnQ=\n"} {
			require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
			_, err := credential.LoadKeyFile(path)
			assert.Error(t, err, "%q", body)
		}
	})
	t.Run("WriteFollowsRotation", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secrets.key")
		ring, err := credential.CreateKeyFile(path)
		require.NoError(t, err)
		old := ring.Keys()[0]
		sealedOld, err := ring.Seal(wsA, idA, []byte(plainKeyAB))
		require.NoError(t, err)

		// Another process rotates: a new key first, the old one kept.
		next := credential.NewKey()
		require.NoError(t, credential.WriteKeyFile(path, []credential.Key{next, old}))
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(raw), "#"), "the file says what it is")

		s, err := ring.Seal(wsA, idB, []byte(plainKeyAB))
		require.NoError(t, err)
		assert.Equal(t, next.ID, s.KeyID, "a ring that follows its file seals under the file's new key")

		// The old key leaves the file: a ring loaded now opens what the
		// new key sealed, and no longer what the old one did.
		require.NoError(t, credential.WriteKeyFile(path, []credential.Key{next}))
		fresh, err := credential.LoadKeyFile(path)
		require.NoError(t, err)
		got, err := fresh.Open(wsA, idB, s)
		require.NoError(t, err)
		assert.Equal(t, plainKeyAB, string(got))
		_, err = fresh.Open(wsA, idA, sealedOld)
		assert.ErrorIs(t, err, credential.ErrOpen, "the dropped key is gone from the file")
	})
	t.Run("OpenReadsTheFileForAnUnknownKey", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "secrets.key")
		ring, err := credential.CreateKeyFile(path)
		require.NoError(t, err)
		other := mustRing(t, credential.NewKey())
		s, err := other.Seal(wsA, idA, []byte(plainKeyAB))
		require.NoError(t, err)
		_, err = ring.Open(wsA, idA, s)
		require.ErrorIs(t, err, credential.ErrOpen)
		require.NoError(t, credential.WriteKeyFile(path, append(other.Keys(), ring.Keys()...)))
		got, err := ring.Open(wsA, idA, s)
		require.NoError(t, err, "a replica opens what another sealed under a newer key of the shared file")
		assert.Equal(t, plainKeyAB, string(got))
	})
}
