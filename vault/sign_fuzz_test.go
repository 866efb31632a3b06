package vault_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// FuzzVerify checks upload-URL verification on any id, expiry and
// signature: Verify accepts exactly the canonical signature of that id and
// expiry, written as the canonical decimal of a time still to come, and
// refuses everything else as FORBIDDEN; and the URL SignedPath makes for
// the id always verifies.
func FuzzVerify(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	sig := func(id, exp string) string {
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(id + "." + exp))
		return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	}
	f.Add("8e03978e-40d5-43e8-bc93-6894a57f9324", "1800000600", sig("8e03978e-40d5-43e8-bc93-6894a57f9324", "1800000600"))
	f.Add("id", "1800000600", sig("id", "1800000600")+"=")
	f.Add("id", "01800000600", sig("id", "01800000600"))
	f.Add("id", "+1800000600", sig("id", "+1800000600"))
	f.Add("id", "1799999999", sig("id", "1799999999"))
	f.Add("id.1800000600", "", "")
	f.Add("", "-1", "AAAA")
	f.Fuzz(func(t *testing.T, id, expires, signature string) {
		err := vault.Verify(secret, id, expires, signature, now)
		if err != nil {
			if code := canvas.ErrorCode(err); code != canvas.EFORBIDDEN {
				t.Fatalf("Verify(%q, %q, %q): code %s", id, expires, signature, code)
			}
		} else {
			exp, perr := strconv.ParseInt(expires, 10, 64)
			switch {
			case perr != nil || strconv.FormatInt(exp, 10) != expires:
				t.Fatalf("Verify accepted the expiry %q, which is not canonical", expires)
			case !now.Before(time.Unix(exp, 0)):
				t.Fatalf("Verify accepted the past expiry %q", expires)
			case signature != sig(id, expires):
				t.Fatalf("Verify(%q, %q) accepted the signature %q", id, expires, signature)
			}
		}

		// The URL made for the id verifies, by the parameters it carries.
		u, perr := url.Parse("https://canvas.example" + vault.SignedPath(secret, id, now.Add(time.Minute)))
		if perr != nil {
			t.Fatalf("SignedPath(%q) is not a URL: %v", id, perr)
		}
		q := u.Query()
		if err := vault.Verify(secret, id, q.Get("expires"), q.Get("signature"), now); err != nil {
			t.Fatalf("the signed path of %q does not verify: %v", id, err)
		}
	})
}
