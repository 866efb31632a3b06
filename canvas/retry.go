package canvas

import (
	"errors"
	"time"
)

// retryAfter is an error that says when the caller may try again.
type retryAfter struct {
	err   error
	after time.Duration
}

func (e *retryAfter) Error() string { return e.err.Error() }
func (e *retryAfter) Unwrap() error { return e.err }

// WithRetryAfter returns err carrying the time after which the caller may
// try again, for a RATE_LIMITED error or a CONFLICT that passes (an
// Idempotency-Key in progress): the server sends it as the Retry-After
// header. Its code, message and details stay err's.
func WithRetryAfter(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfter{err: err, after: after}
}

// RetryAfter returns the time WithRetryAfter attached to err, and whether
// there is one.
func RetryAfter(err error) (time.Duration, bool) {
	var r *retryAfter
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}

// RateLimited returns a RATE_LIMITED error with message, which the caller
// may try again after after.
func RateLimited(after time.Duration, message string) error {
	return WithRetryAfter(&Error{Code: ERATELIMITED, Message: message}, after)
}
