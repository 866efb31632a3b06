package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// statusOf maps each error code to its HTTP status. Unknown codes are 500.
var statusOf = map[string]int{
	canvas.EBADREQUEST:        http.StatusBadRequest,
	canvas.EINVALIDENVNAME:    http.StatusBadRequest,
	canvas.EINVALIDCOMPATDATE: http.StatusBadRequest,
	canvas.EUNAUTHORIZED:      http.StatusUnauthorized,
	canvas.EFORBIDDEN:         http.StatusForbidden,
	canvas.ENOTFOUND:          http.StatusNotFound,
	canvas.EMETHODNOTALLOWED:  http.StatusMethodNotAllowed,
	canvas.ECONFLICT:          http.StatusConflict,
	canvas.EPAYLOADTOOLARGE:   http.StatusRequestEntityTooLarge,
	canvas.EHEADERSTOOLARGE:   http.StatusRequestHeaderFieldsTooLarge,
	canvas.EINVALID:           http.StatusUnprocessableEntity,
	canvas.ERATELIMITED:       http.StatusTooManyRequests,
	canvas.EINTERNAL:          http.StatusInternalServerError,
	canvas.EPROVIDER:          http.StatusBadGateway,
	canvas.ETIMEOUT:           http.StatusGatewayTimeout,
	// A cancelled run or call conflicts with the request that waited for
	// it, as a run that is no longer cancellable does.
	canvas.ECANCELLED: http.StatusConflict,
	// A review's rejection ends a workflow run as a conflict with the
	// request that waited for it; a run without output failed where its
	// model would.
	canvas.EREJECTED: http.StatusConflict,
	canvas.ENOOUTPUT: http.StatusBadGateway,
	// A direct publish to a protected environment conflicts with its
	// policy.
	canvas.EAPPROVALREQUIRED: http.StatusConflict,
}

// ErrorStatus returns the HTTP status for an error code.
func ErrorStatus(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// newErrorBody returns the body of an error answer (wire.ErrorBody): code,
// err's message and details, and the request id.
func newErrorBody(code string, err error, requestID string) wire.ErrorBody {
	body := wire.ErrorBody{Code: code, Message: canvas.ErrorMessage(err), RequestID: requestID}
	for _, d := range canvas.ErrorDetails(err) {
		body.Details = append(body.Details, wire.Detail{Path: d.Path, Message: d.Message})
	}
	return body
}

// writeError writes err as the error body with its status. An internal
// error is logged with its cause and the request id, and shown to the caller
// only as a generic message; a provider failure or a workflow timeout is the
// caller's answer, not the server's fault, and is not logged as one.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := canvas.ErrorCode(err)
	status := ErrorStatus(code)
	reqID := requestIDFrom(r.Context())
	switch {
	case status < 500 || code == canvas.EPROVIDER || code == canvas.ETIMEOUT || code == canvas.ENOOUTPUT:
	case clientGone(r, err):
		s.logger.DebugContext(r.Context(), "client went away",
			slog.String("requestId", reqID), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Any("error", err))
	default:
		s.logger.ErrorContext(r.Context(), "request failed",
			slog.String("requestId", reqID), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Any("error", err))
	}
	if after, ok := canvas.RetryAfter(err); ok {
		w.Header().Set("Retry-After", retryAfterSeconds(after))
	}
	var ce *canvas.Error
	if code == canvas.EINTERNAL && !errors.As(err, &ce) {
		err = canvas.Errorf(canvas.EINTERNAL, "Internal error.")
	}
	body := newErrorBody(code, err, reqID)
	if strings.HasPrefix(r.URL.Path, openAIPathPrefix) {
		writeJSON(w, status, withOpenAIError(body, status))
		return
	}
	writeJSON(w, status, body)
}
