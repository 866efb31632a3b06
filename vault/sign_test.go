package vault_test

import (
	"bytes"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// signedQuery signs id until expires and returns the URL's path and query.
func signedQuery(t *testing.T, secret []byte, id string, expires time.Time) (string, url.Values) {
	t.Helper()
	u, err := url.Parse(vault.SignedPath(secret, id, expires))
	require.NoError(t, err)
	return u.Path, u.Query()
}

func TestVerify(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	now := time.Unix(1_800_000_000, 0)
	id := "3f1c2b4a-0000-4000-8000-000000000001"
	path, q := signedQuery(t, secret, id, now.Add(time.Minute))
	assert.Equal(t, "/v3/files/"+id+"/content", path)
	exp, sig := q.Get("expires"), q.Get("signature")
	assert.Equal(t, strconv.FormatInt(now.Add(time.Minute).Unix(), 10), exp)

	t.Run("OK", func(t *testing.T) {
		assert.NoError(t, vault.Verify(secret, id, exp, sig, now))
	})
	flip := func(s string) string {
		b := []byte(s)
		if b[0] == 'A' {
			b[0] = 'B'
		} else {
			b[0] = 'A'
		}
		return string(b)
	}
	later := strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
	for name, tc := range map[string]struct {
		secret       []byte
		id, exp, sig string
		now          time.Time
	}{
		"Expired":         {secret, id, exp, sig, now.Add(time.Minute)},
		"TamperedID":      {secret, "3f1c2b4a-0000-4000-8000-000000000002", exp, sig, now},
		"TamperedExpiry":  {secret, id, later, sig, now},
		"TamperedSig":     {secret, id, exp, flip(sig), now},
		"TruncatedSig":    {secret, id, exp, sig[:10], now},
		"EmptySig":        {secret, id, exp, "", now},
		"MalformedSig":    {secret, id, exp, "!!not base64!!", now},
		"MalformedExpiry": {secret, id, "soon", sig, now},
		"PaddedExpiry":    {secret, id, "0" + exp, sig, now},
		"OtherSecret":     {bytes.Repeat([]byte{8}, 32), id, exp, sig, now},
	} {
		t.Run("Forbidden"+name, func(t *testing.T) {
			err := vault.Verify(tc.secret, tc.id, tc.exp, tc.sig, tc.now)
			require.Error(t, err)
			assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))
		})
	}
}
