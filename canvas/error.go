package canvas

import (
	"errors"
	"fmt"
)

// Error codes. They are part of the public contract: the server maps each to
// one HTTP status, and clients match on them.
const (
	ECONFLICT          = "CONFLICT"
	EFORBIDDEN         = "FORBIDDEN"
	EINTERNAL          = "INTERNAL"
	EINVALID           = "VALIDATION"
	EBADREQUEST        = "BAD_REQUEST"
	EINVALIDENVNAME    = "INVALID_ENVIRONMENT_NAME"
	EINVALIDCOMPATDATE = "INVALID_COMPATIBILITY_DATE"
	ENOTFOUND          = "NOT_FOUND"
	EMETHODNOTALLOWED  = "METHOD_NOT_ALLOWED"
	EPAYLOADTOOLARGE   = "PAYLOAD_TOO_LARGE"
	EHEADERSTOOLARGE   = "HEADERS_TOO_LARGE" // the request's header block is over the server's limit
	ERATELIMITED       = "RATE_LIMITED"
	EUNAUTHORIZED      = "UNAUTHORIZED"
	EPROVIDER          = "PROVIDER_ERROR"
	// ETIMEOUT is a run (a workflow run, a model call) that reached its
	// deadline.
	ETIMEOUT = "TIMEOUT"
	// ECANCELLED is work stopped before it finished: a caller that went
	// away, a cancelled run or step.
	ECANCELLED = "CANCELLED"
	// EREJECTED is a workflow run that a review rejected.
	EREJECTED = "REJECTED"
	// ENOOUTPUT is a workflow run that ended with no step left to give
	// its output.
	ENOOUTPUT = "NO_OUTPUT"
	// EAPPROVALREQUIRED is a change of a protected environment made
	// directly: it goes through a publication request
	// (POST /publication-requests) that other people approve.
	EAPPROVALREQUIRED = "APPROVAL_REQUIRED"
)

// Error is the one error type of the domain. Code is machine-readable,
// Message is safe to show to the caller, Details lists individual problems
// (validation errors), and Err is an optional cause that is logged but never
// shown.
type Error struct {
	Code    string
	Message string
	Details []Detail
	Err     error
}

// Detail is one problem found in a request: Path is a JSON pointer into the
// request (for example "/json/title" or "/query/limit").
type Detail struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a VALIDATION error listing every detail.
func Invalid(message string, details ...Detail) *Error {
	return &Error{Code: EINVALID, Message: message, Details: details}
}

// NotFound returns a NOT_FOUND error naming the kind of thing that was not
// found, for example NotFound("canvas").
func NotFound(what string) *Error {
	return Errorf(ENOTFOUND, "%s not found", what)
}

// ApprovalRequired returns the APPROVAL_REQUIRED error of a direct
// change of the protected environment envName, pointing at publication
// requests.
func ApprovalRequired(envName string) *Error {
	return Errorf(EAPPROVALREQUIRED, "The %s environment is protected: publish to it through a publication request "+
		"(POST /publication-requests) that other people approve.", envName)
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil,
// and EINTERNAL for any other error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, "" for
// nil, and a generic message for any other error so that internals never
// leak.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ErrorDetails returns the details of the first *Error in err's chain.
func ErrorDetails(err error) []Detail {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
