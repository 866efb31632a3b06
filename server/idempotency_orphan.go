package server

import (
	"context"
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/idempotency"
)

// orphanOutcome says what rebuilding the answer of an orphaned key came to.
type orphanOutcome int

const (
	// orphanAnswered: the answer was written.
	orphanAnswered orphanOutcome = iota
	// orphanRerun: the work's answer is not one that is kept (a stream, a
	// failure), so the request runs again, as a retry of it would have.
	orphanRerun
	// orphanPending: the work has not reached its answer yet.
	orphanPending
)

// orphanAnswerer writes the answer the route's handler gave, or would have
// given, for the work whose id is refID; r is the retried request.
type orphanAnswerer func(s *Server, w http.ResponseWriter, r *http.Request, refID string) (orphanOutcome, error)

// orphanAnswerers are the idempotent routes whose answer can be rebuilt
// from the record their work wrote, by route pattern.
var orphanAnswerers = map[string]orphanAnswerer{
	"POST /v2/chat/completions": (*Server).completionFromRef,
	"POST /v1/tasks":            (*Server).taskFromRef,
}

// answerOrphan answers a retry of a request whose process died after its
// work committed (orphan.RefID) but before its answer was kept. The answer
// is rebuilt from the work, sent with Idempotent-Replayed: true and kept as
// the key's answer. While the work has not reached its answer the retry is
// 409 CONFLICT with Retry-After and the key stays as it is; when that
// answer is not one to keep, the key is released and rerun is true: the
// caller runs the request again.
func (s *Server) answerOrphan(w http.ResponseWriter, r *http.Request, orphan *idempotency.Record) (rerun bool, err error) {
	answer := orphanAnswerers[r.Pattern]
	if answer == nil {
		return false, canvas.Errorf(canvas.ECONFLICT,
			"The request with this Idempotency-Key was carried out, but its answer was lost.")
	}
	ctx := context.WithoutCancel(r.Context())
	cw := &captureWriter{ResponseWriter: w}
	cw.Header().Set("Idempotent-Replayed", "true")
	outcome, err := answer(s, cw, r, orphan.RefID)
	switch {
	case canvas.ErrorCode(err) == canvas.ENOTFOUND:
		cw.Header().Del("Idempotent-Replayed")
		return false, canvas.Errorf(canvas.ECONFLICT,
			"The request with this Idempotency-Key was carried out, but its record is gone.")
	case err != nil:
		cw.Header().Del("Idempotent-Replayed")
		return false, err
	}
	switch outcome {
	case orphanRerun:
		cw.Header().Del("Idempotent-Replayed")
		s.releaseKey(ctx, orphan)
		return true, nil
	case orphanPending:
		cw.Header().Del("Idempotent-Replayed")
		return false, s.idem.InProgress(orphan)
	}
	s.keepAnswer(ctx, cw, orphan)
	return false, nil
}

// completionFromRef rebuilds handleCreateCompletion's answer from the run
// its work recorded: 202 for an asynchronous request, 200 with the result
// for a completed one, 202 for a paused workflow run. A streamed request
// or a failed run runs again; a workflow run still running is pending.
func (s *Server) completionFromRef(w http.ResponseWriter, r *http.Request, refID string) (orphanOutcome, error) {
	svc, err := s.completionsService()
	if err != nil {
		return 0, err
	}
	var req wire.CompletionRequest
	if err := s.decodeJSON(r, "CompletionRequest", &req); err != nil {
		return 0, err
	}
	async := req.Async || req.WebhookURL != ""
	if req.Stream && !async {
		return orphanRerun, nil
	}
	run, err := svc.GetRun(r.Context(), refID)
	if err != nil {
		return 0, err
	}
	switch {
	case async:
		writeJSON(w, http.StatusAccepted, wire.Accepted{ID: run.ID, Object: completion.AsyncObject,
			Status: completion.StatusQueued})
	case pausedWorkflow(w, run):
	case run.Status == completion.StatusCompleted:
		writeJSON(w, http.StatusOK, run.Result)
	case run.Status == completion.StatusFailed:
		return orphanRerun, nil
	default:
		return orphanPending, nil
	}
	return orphanAnswered, nil
}

// taskFromRef rebuilds handleCreateTask's answer, 202, from the task run
// its work recorded.
func (s *Server) taskFromRef(w http.ResponseWriter, r *http.Request, refID string) (orphanOutcome, error) {
	svc, err := s.completionsService()
	if err != nil {
		return 0, err
	}
	run, err := svc.GetTask(r.Context(), refID)
	if err != nil {
		return 0, err
	}
	writeJSON(w, http.StatusAccepted, wire.Accepted{ID: run.ID, Status: completion.StatusQueued})
	return orphanAnswered, nil
}
