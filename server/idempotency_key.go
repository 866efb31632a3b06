package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/idempotency"
)

// idempotencyKey returns the request's Idempotency-Key and whether the
// header was sent at all. A header sent blank (net/http trims its
// whitespace) or more than once is given but has no valid key, so that it
// is refused rather than taken for no header.
func idempotencyKey(r *http.Request) (key string, given bool) {
	values := r.Header.Values(idempotency.Header)
	switch len(values) {
	case 0:
		return "", false
	case 1:
		return values[0], true
	}
	return "", true
}
