package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// maxReplayBody bounds the response an idempotency key keeps; a larger
// answer is sent but not kept, and the key is released.
const maxReplayBody = 1 << 20

// idempotent wraps an authenticated POST handler so that an
// Idempotency-Key header makes it run once per key of the workspace:
//
//   - the first request with a key reserves it, runs, and its answer
//     (status, Content-Type, body) is kept for idempotency.TTL when it is
//     2xx or 4xx, except 401, 403, 408 and 429, which depend on the caller
//     or the moment rather than the request; any other answer (5xx) releases
//     the key so that a retry runs again;
//   - a retry with the same key and the same request (method, path and
//     canonical JSON body, see idempotency.Hash) gets that answer again,
//     with Idempotent-Replayed: true, without running;
//   - the same key with a different request is 409 CONFLICT; while the
//     first request is still running it is 409 CONFLICT with Retry-After,
//     the time its holder's lease has left (idempotency.Service.InProgress).
//
// The key is reserved through the idempotency.Service, in the name of this
// process's idempotency.Owner, so that it is released once the process
// dies and its lease lapses (or at once, when the next server knows it
// died: idempotency.Service.ReleaseOthers); the work the request commits
// records its id on the key in the same transaction. A retry of a request
// whose process died after its work committed gets the answer rebuilt from
// that work (answerOrphan) instead of running twice.
//
// A streamed answer (text/event-stream) cannot be replayed: the key guards
// against a concurrent duplicate while the stream runs and is released when
// it ends, so a retry streams again. A request without the header runs as
// usual; a blank or repeated header is VALIDATION, not taken for none.
func (s *Server) idempotent(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key, given := idempotencyKey(r)
		p := canvas.PrincipalFrom(r.Context())
		if !given || p == nil {
			return h(w, r)
		}
		if !idempotency.ValidKey(key) {
			return canvas.Invalid("Idempotency-Key is invalid.", canvas.Detail{Path: "/header/Idempotency-Key",
				Message: "must be sent once, as 1 to 255 printable ASCII characters"})
		}
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.maxBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return canvas.Errorf(canvas.EPAYLOADTOOLARGE, "Request body is larger than %d bytes.", s.maxBody)
			}
			return canvas.Errorf(canvas.EBADREQUEST, "Could not read the request body.")
		}
		release, err := s.idem.Hold(r.Context())
		if err != nil {
			return err
		}
		defer release()
		rec := &idempotency.Record{WorkspaceID: p.WorkspaceID, Key: key,
			RequestHash: idempotency.Hash(r.Method, r.URL.Path, body)}
		existing, err := s.idem.Reserve(r.Context(), rec)
		if err != nil {
			return err
		}
		if existing != nil && existing.Orphaned && existing.RequestHash == rec.RequestHash {
			if rerun, err := s.answerOrphan(w, rewound(r, body), existing); err != nil || !rerun {
				return err
			}
			// The orphan's answer is not one to keep: it was released, and
			// the request runs again under a new reservation.
			if existing, err = s.idem.Reserve(r.Context(), rec); err != nil {
				return err
			}
		}
		if existing != nil {
			return s.replay(w, existing, rec.RequestHash)
		}
		return s.runIdempotent(w, rewound(r, body), h, rec)
	}
}

// rewound returns r reading body afresh.
func rewound(r *http.Request, body []byte) *http.Request {
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

// replay answers a request whose key is already taken. A key in progress
// is CONFLICT with Retry-After: how long its holder still holds it.
func (s *Server) replay(w http.ResponseWriter, existing *idempotency.Record, hash string) error {
	switch {
	case existing.RequestHash != hash:
		return canvas.Errorf(canvas.ECONFLICT, "This Idempotency-Key was already used with a different request.")
	case !existing.Completed():
		return s.idem.InProgress(existing)
	}
	if existing.ContentType != "" {
		w.Header().Set("Content-Type", existing.ContentType)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(existing.Status)
	_, _ = w.Write(existing.Body)
	return nil
}

// runIdempotent runs h for the reservation rec, then keeps its answer or
// releases the key. The key is released as well when h panics. h runs with
// rec in its context (idempotency.NewContext), so that the store records
// the work it commits on the key.
func (s *Server) runIdempotent(w http.ResponseWriter, r *http.Request, h handlerFunc, rec *idempotency.Record) error {
	// The store writes outlive a client that hangs up: the answer was
	// produced, and a retry must see it.
	ctx := context.WithoutCancel(r.Context())
	cw := &captureWriter{ResponseWriter: w}
	done := false
	defer func() {
		if !done {
			s.releaseKey(ctx, rec)
		}
	}()
	if err := h(cw, r.WithContext(idempotency.NewContext(r.Context(), rec))); err != nil {
		s.writeError(cw, r, err)
	}
	done = true
	s.keepAnswer(ctx, cw, rec)
	return nil
}

// keepAnswer saves the answer cw captured as rec's, or releases the key
// when it is not one to keep or cannot be saved.
func (s *Server) keepAnswer(ctx context.Context, cw *captureWriter, rec *idempotency.Record) {
	if !cw.keepable() {
		s.releaseKey(ctx, rec)
		return
	}
	rec.Status, rec.ContentType, rec.Body = cw.status, cw.Header().Get("Content-Type"), cw.body.Bytes()
	if err := s.idem.Complete(ctx, rec); err != nil {
		s.logger.ErrorContext(ctx, "idempotency: keep answer", slog.String("requestId", requestIDFrom(ctx)),
			slog.String("key", rec.Key), slog.Any("error", err))
		s.releaseKey(ctx, rec)
	}
}

func (s *Server) releaseKey(ctx context.Context, rec *idempotency.Record) {
	if err := s.idem.Release(ctx, rec); err != nil {
		s.logger.ErrorContext(ctx, "idempotency: release key", slog.String("requestId", requestIDFrom(ctx)),
			slog.String("key", rec.Key), slog.Any("error", err))
	}
}

// captureWriter passes a response through to the client and keeps a copy
// of it, up to maxReplayBody, unless it is a stream.
type captureWriter struct {
	http.ResponseWriter
	status    int
	body      bytes.Buffer
	overflow  bool
	streaming bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
		mt, _, _ := mime.ParseMediaType(c.Header().Get("Content-Type"))
		c.streaming = mt == "text/event-stream"
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.streaming && !c.overflow {
		if c.body.Len()+len(b) > maxReplayBody {
			c.overflow = true
			c.body = bytes.Buffer{}
		} else {
			c.body.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

// Flush lets streamed responses through the wrapper.
func (c *captureWriter) Flush() {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// keepable reports whether the captured answer is kept for replay.
func (c *captureWriter) keepable() bool {
	if c.status == 0 || c.streaming || c.overflow {
		return false
	}
	switch c.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return c.status >= 200 && c.status < 500
}
