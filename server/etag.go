package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/env"
)

// Conditional reads. A read endpoint that answers an ETag derives it from
// the exact bytes it serves (env.ETagOf), so the tag changes exactly when
// the body does, in every process and replica alike. If-None-Match (a list,
// several header lines, weak or strong tags, or *) that names the current
// tag is answered 304 Not Modified with the ETag and no body, per RFC 9110
// section 13.1.2.

// ifNoneMatch reports whether the request's If-None-Match names etag.
func ifNoneMatch(r *http.Request, etag string) bool {
	for _, v := range r.Header.Values("If-None-Match") {
		if etagMatches(v, etag) {
			return true
		}
	}
	return false
}

// writeTagged answers 200 with the JSON body and its ETag, or 304 when the
// request's If-None-Match already names the ETag. Cache-Control: no-cache
// lets caches keep the body but makes them revalidate every use.
func writeTagged(w http.ResponseWriter, r *http.Request, body []byte, etag string) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if ifNoneMatch(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// encodeJSON encodes v as writeJSON does: HTML escaping off, a newline at
// the end.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withIDTagged is withID for reads that answer an ETag: op's result is
// encoded, tagged with env.ETagOf, and answered 200 or 304.
func withIDTagged[S, R any](svc func() (S, error), name string, op func(S, context.Context, string) (R, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := callWithID(r, svc, name, op)
		if err != nil {
			return err
		}
		body, err := encodeJSON(res)
		if err != nil {
			return err
		}
		writeTagged(w, r, body, env.ETagOf(body))
		return nil
	}
}

// hasIfNoneMatch reports whether the request carries a non-empty
// If-None-Match.
func hasIfNoneMatch(r *http.Request) bool {
	for _, v := range r.Header.Values("If-None-Match") {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}
