package wire

// Error codes the server answers in ErrorBody.Code. The server maps each to
// one HTTP status.
const (
	CodeConflict          = "CONFLICT"
	CodeForbidden         = "FORBIDDEN"
	CodeInternal          = "INTERNAL"
	CodeInvalid           = "VALIDATION"
	CodeBadRequest        = "BAD_REQUEST"
	CodeInvalidEnvName    = "INVALID_ENVIRONMENT_NAME"
	CodeInvalidCompatDate = "INVALID_COMPATIBILITY_DATE"
	CodeNotFound          = "NOT_FOUND"
	CodeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	CodePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	CodeHeadersTooLarge   = "HEADERS_TOO_LARGE"
	CodeRateLimited       = "RATE_LIMITED"
	CodeUnauthorized      = "UNAUTHORIZED"
	CodeProvider          = "PROVIDER_ERROR"
	CodeTimeout           = "TIMEOUT"
	CodeCancelled         = "CANCELLED"
	CodeRejected          = "REJECTED"
	CodeNoOutput          = "NO_OUTPUT"
	// CodeApprovalRequired is a direct publish to a protected
	// environment: publish through a publication request instead.
	CodeApprovalRequired = "APPROVAL_REQUIRED"
)

// ErrorBody is the body of every error answer, and the data of a
// completion stream's error event.
type ErrorBody struct {
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Details   []Detail `json:"details,omitempty"`
	RequestID string   `json:"requestId"`
}

// Detail is one problem of a request: the JSON pointer of the value (under
// /json for the body) and what is wrong with it.
type Detail struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}
