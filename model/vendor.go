package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// VendorError is the cause of a PROVIDER_ERROR that a model vendor
// answered: the provider's name, the vendor's HTTP status (0 when no answer
// came: a connection failure) and error code, and how long the vendor
// asked to wait before trying again (its Retry-After; zero when it did not
// say). The vendor's own message stays in Err, for the log only: it can
// tell internals of the back end (the Caller cuts a credential's key out
// of it, which a vendor refusing the key often quotes).
type VendorError struct {
	Provider   string
	Status     int
	Code       string
	RetryAfter time.Duration
	Err        error
}

// Error implements the error interface.
func (e *VendorError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %v", e.Provider, e.Err)
	}
	return fmt.Sprintf("%s: HTTP %d %s: %v", e.Provider, e.Status, e.Code, e.Err)
}

// Unwrap returns the vendor client's error.
func (e *VendorError) Unwrap() error { return e.Err }

// Retryable reports whether calling again may succeed: the vendor was
// unreachable, or answered 408, 409, 429 or a 5xx.
func (e *VendorError) Retryable() bool {
	switch {
	case e.Status == 0:
		return true
	case e.Status == http.StatusRequestTimeout, e.Status == http.StatusConflict,
		e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	}
	return false
}

// Failure returns the PROVIDER_ERROR of a failed vendor call: its message
// names the provider and the vendor's status and code (never the vendor's
// message), and its cause is a *VendorError. When ctx ended first the
// error says so and wraps ctx's error, so that the Caller reports the call
// cancelled; a deadline of the call's own timeout is "did not answer
// within".
func Failure(ctx context.Context, provider string, status int, code string, header http.Header, err error) error {
	ve := &VendorError{Provider: provider, Status: status, Code: code, RetryAfter: RetryAfter(header), Err: err}
	e := &canvas.Error{Code: canvas.EPROVIDER, Err: ve}
	switch {
	case status != 0:
		what := ""
		if code != "" {
			what = " (" + code + ")"
		}
		e.Message = fmt.Sprintf("Model provider %q answered HTTP %d%s.", provider, status, what)
	case ctx.Err() != nil:
		e.Message = fmt.Sprintf("Model provider %q did not answer in time: %v.", provider, ctx.Err())
		ve.Err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	case errors.Is(err, context.DeadlineExceeded):
		e.Message = fmt.Sprintf("Model provider %q did not answer in time.", provider)
	default:
		e.Message = fmt.Sprintf("Model provider %q failed.", provider)
	}
	return e
}

// RetryAfter reads a Retry-After header (seconds, or an HTTP date) and the
// retry-after-ms header some vendors send; zero when there is none.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// vendorError returns the *VendorError in err's chain, or nil.
func vendorError(err error) *VendorError {
	var ve *VendorError
	if errors.As(err, &ve) {
		return ve
	}
	return nil
}
