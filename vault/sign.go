package vault

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// SignedPath returns the path and query of the upload URL of file id,
// valid until expires: "/v3/files/{id}/content?expires=<unix>&signature=<s>"
// where s is the unpadded base64url HMAC-SHA256, under secret, of
// "<id>.<unix>".
func SignedPath(secret []byte, id string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	q := url.Values{"expires": {exp}, "signature": {sign(secret, id, exp)}}
	return "/v3/files/" + url.PathEscape(id) + "/content?" + q.Encode()
}

// Verify checks an upload URL's expires and signature parameters for file
// id at time now. A signature that does not match (a changed id, expiry or
// signature), a malformed parameter, or an expiry in the past is FORBIDDEN.
// The signatures are compared in constant time.
func Verify(secret []byte, id, expires, signature string, now time.Time) error {
	forbidden := canvas.Errorf(canvas.EFORBIDDEN, "The upload URL is invalid or has expired.")
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != expires {
		return forbidden
	}
	got, err := base64.RawURLEncoding.DecodeString(signature)
	if err != nil {
		return forbidden
	}
	if !hmac.Equal(got, mac(secret, id, expires)) {
		return forbidden
	}
	if !now.Before(time.Unix(exp, 0)) {
		return forbidden
	}
	return nil
}

func sign(secret []byte, id, expires string) string {
	return base64.RawURLEncoding.EncodeToString(mac(secret, id, expires))
}

func mac(secret []byte, id, expires string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(id + "." + expires))
	return h.Sum(nil)
}
