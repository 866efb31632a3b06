package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"syscall"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// logRequest logs one answered request. Requests are logged at DEBUG, so
// that a busy server's log holds what went wrong rather than every request;
// a 5xx is logged at ERROR unless the client went away first, which is the
// client's doing, not the server's.
func (s *Server) logRequest(r *http.Request, id string, status int, d time.Duration) {
	ctx := r.Context()
	level := slog.LevelDebug
	if status >= 500 && ctx.Err() == nil {
		level = slog.LevelError
	}
	if !s.logger.Enabled(ctx, level) {
		return
	}
	s.logger.LogAttrs(ctx, level, "request",
		slog.String("requestId", id), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Int("status", status),
		slog.Duration("duration", d))
}

// clientGone reports whether err, met while serving r, means the client
// went away (its request was cancelled, or the connection broke while the
// answer was written) rather than that the server failed.
func clientGone(r *http.Request, err error) bool {
	return r.Context().Err() != nil || errors.Is(err, context.Canceled) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		canvas.ErrorCode(err) == canvas.ECANCELLED
}
