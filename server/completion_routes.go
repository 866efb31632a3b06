package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// registerCompletionRoutes mounts running a canvas and reading a run.
// handleCreateCompletion is a method so that middleware (idempotency) can
// wrap it.
func (s *Server) registerCompletionRoutes() {
	s.route("POST /v2/chat/completions", s.idempotent(s.handleCreateCompletion))
	s.route("GET /v2/chat/completions", s.handleListCompletions)
	s.route("GET /v2/chat/completions/{id}", s.handleGetCompletion)
	s.route("POST /v2/chat/completions/{id}/feedback", s.handleCompletionFeedback)
}

// runListRequest is what a run list (GET /v2/chat/completions, GET
// /v1/tasks) was asked for: its filters and page bounds, its filters as
// the page links repeat them, whether links are objects, and whether the
// page carries the totals of the whole list.
type runListRequest struct {
	params      completion.ListParams
	filters     []pageParam
	objectLinks bool
	totals      bool
}

// runListQuery reads the query of a run list. The service checks the
// values, so that one 422 lists each problem.
func runListQuery(r *http.Request) (runListRequest, error) {
	q := newQuery(r)
	lr := runListRequest{params: completion.ListParams{
		CanvasID:  q.String("canvasId", false),
		VersionID: q.String("versionId", false),
		Status:    q.String("status", false),
		Since:     q.Time("since"),
		Until:     q.Time("until"),
		Limit:     q.Int("limit", completion.DefaultListLimit),
		Offset:    q.Int("offset", 0),
	}}
	lr.objectLinks = q.Bool("objectLinks", false)
	lr.totals = q.Bool("totals", false)
	if err := q.ErrWith(lr.params.Check()); err != nil {
		return lr, err
	}
	if lr.params.Limit == 0 {
		lr.params.Limit = completion.DefaultListLimit
	}
	for _, name := range []string{"canvasId", "versionId", "status", "since", "until"} {
		if v := r.URL.Query().Get(name); v != "" {
			lr.filters = append(lr.filters, pageParam{name, v})
		}
	}
	return lr, nil
}

// handleListCompletions serves one page of the workspace's completion runs
// in the pagination envelope, newest first; each item is a run as GET
// /v2/chat/completions/{id} answers it.
func (s *Server) handleListCompletions(w http.ResponseWriter, r *http.Request) error {
	return s.listRuns(w, r, (*completion.Service).ListRuns, (*completion.Service).RunTotals)
}

// runPage is the envelope of a run list: a page, and the totals of the
// whole list when they were asked for.
type runPage struct {
	wire.Page[*completion.Run]
	Totals *completion.Totals `json:"totals,omitempty"`
}

// listRuns serves one page of runs that list returns, with the totals
// that totals returns when the query asks for them (totals=true).
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request,
	list func(*completion.Service, context.Context, completion.ListParams) ([]*completion.Run, int, error),
	totals func(*completion.Service, context.Context, completion.ListParams) (*completion.Totals, error)) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	lr, err := runListQuery(r)
	if err != nil {
		return err
	}
	runs, total, err := list(svc, r.Context(), lr.params)
	if err != nil {
		return err
	}
	page := runPage{Page: newPage(runs, total, nil, pageRequest{
		Filters: lr.filters, Limit: lr.params.Limit, Offset: lr.params.Offset, ObjectLinks: lr.objectLinks,
	})}
	if lr.totals {
		if page.Totals, err = totals(svc, r.Context(), lr.params); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// pausedWorkflow reports whether run is a workflow run that paused instead
// of ending (waiting-for-review or requires-action), and if so answers 202
// with wire.Accepted, object workflow.run: the run goes on once it is
// answered through POST /workflow/runs/{id}/review or /resume, and GET
// /workflow/runs/{id} reads it. ID and ExecutionID are both the run's
// execution id.
func pausedWorkflow(w http.ResponseWriter, run *completion.Run) bool {
	if run == nil || !run.Paused() {
		return false
	}
	writeJSON(w, http.StatusAccepted, wire.Accepted{ID: run.ID, Object: wire.WorkflowRunObject,
		Status: run.WorkflowStatus, ExecutionID: run.ID})
	return true
}

// completionsService returns the completion service, or NOT_FOUND when the
// server was built without one.
func (s *Server) completionsService() (*completion.Service, error) {
	if s.completions == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Completions are not configured on this server.")
	}
	return s.completions, nil
}

// handleCreateCompletion runs a canvas: 200 with the completion response, a
// text/event-stream when stream is set, or 202 when async or webhook_url is
// set (async wins over stream). On a workflow version the run's output is
// the completion's text, and a run that pauses answers 202 with its
// execution id (pausedWorkflow).
func (s *Server) handleCreateCompletion(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	// Model work is refused before the body's validation, so that a server
	// pushing back spends little on what it refuses: the body is parsed
	// once and looked at for whether it queues work. It counts as model
	// work being queued once it is valid.
	req, err := s.decodeCompletion(r, func(queues bool) error {
		if !queues {
			return nil
		}
		return s.checkModelWork(r.Context(), canvas.PrincipalFrom(r.Context()))
	})
	if err != nil {
		return err
	}
	params := completion.RunParams{
		CanvasID: req.CanvasID, EnvironmentName: req.EnvironmentName, VersionID: req.VersionID,
		ApplicationID: req.ApplicationID, AssignmentKey: req.AssignmentKey, Variables: req.Variables, Settings: completionSettings(req.Settings),
		Async: req.Async, WebhookURL: req.WebhookURL, ForwardHeaders: webhook.ForwardedHeaders(r.Header),
		Live: liveRun(r),
	}
	params.Messages, params.Conversation = requestMessages(req.Messages)
	if req.Stream && !req.Async && req.WebhookURL == "" {
		return s.streamCompletion(w, r, svc, params)
	}
	if req.Async || req.WebhookURL != "" {
		// The body said so above too, and was checked then.
		defer s.limits.delay.admitted()()
	}
	run, err := svc.Run(r.Context(), params)
	if err != nil {
		return err
	}
	if run.Async {
		status := run.Status
		if run.Kind == completion.KindWorkflow {
			// An accepted workflow run is pending; to the completion
			// client it is queued like any other asynchronous run.
			status = completion.StatusQueued
		}
		writeJSON(w, http.StatusAccepted, wire.Accepted{ID: run.ID, Object: completion.AsyncObject, Status: status})
		return nil
	}
	if pausedWorkflow(w, run) {
		return nil
	}
	writeJSON(w, http.StatusOK, run.Result)
	return nil
}

// handleGetCompletion returns a completion run: its state and, once
// finished, its result or error.
func (s *Server) handleGetCompletion(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	run, err := svc.GetRun(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

// handleCompletionFeedback records an end user's feedback on a completion
// run, or replaces it (one per run): 200 with the feedback.
func (s *Server) handleCompletionFeedback(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var req wire.FeedbackRequest
	if err := s.decodeJSON(r, "FeedbackRequest", &req); err != nil {
		return err
	}
	f, err := svc.SetFeedback(r.Context(), id, req.Score, req.Comment)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

// streamCompletion answers with server-sent events: one chunk event per
// piece of output, flushed at once, then "data: [DONE]". A failure before
// the first byte is an ordinary error response; after it, an "error" event
// carrying the error body. A client that goes away cancels the request
// context, which stops the model. A workflow run that pauses before its
// output step completes has streamed nothing: it is answered 202 as in
// handleCreateCompletion.
func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, svc *completion.Service, params completion.RunParams) error {
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	params.Started = func(run *completion.Run) {
		sw.id, sw.created = run.ID, run.CreatedAt.Unix()
	}
	params.Stream = sw.chunk
	run, err := svc.Run(r.Context(), params)
	if err != nil {
		if !sw.started {
			return err
		}
		if r.Context().Err() != nil {
			return nil // the client is gone; the run is recorded failed
		}
		code := canvas.ErrorCode(err)
		if code == canvas.ECANCELLED {
			code = canvas.EPROVIDER
		}
		body, merr := json.Marshal(newErrorBody(code, err, requestIDFrom(r.Context())))
		if merr != nil {
			return merr // after the first byte: the adapter logs it
		}
		if werr := sw.event("error", body); werr != nil {
			s.logger.DebugContext(r.Context(), "stream error event not sent", slog.Any("error", werr))
		}
		return nil
	}
	if !sw.started && pausedWorkflow(w, run) {
		return nil
	}
	if err := sw.final(run.Result); err != nil {
		return nil // the client is gone; the run is recorded
	}
	_ = sw.event("", []byte("[DONE]"))
	return nil
}

// sseWriter writes a completion stream.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      string
	created int64
	started bool
}

// start writes the stream's headers once.
func (sw *sseWriter) start() {
	if sw.started {
		return
	}
	sw.started = true
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	sw.w.WriteHeader(http.StatusOK)
}

// chunk writes one piece of output, text or a piece of a tool call, as a
// chunk event and flushes it; its error (the client went away) stops the
// model.
func (sw *sseWriter) chunk(c model.Chunk) error {
	delta := wire.ChunkDelta{Content: wire.Content{Text: c.Text}}
	if d := c.ToolCall; d != nil {
		delta.ToolCall = &wire.ToolCallDelta{Index: d.Index, ID: d.ID, Name: d.Name, Arguments: d.Arguments}
	}
	b, err := json.Marshal(wire.Chunk{ID: sw.id, Object: completion.ChunkObject, Created: sw.created,
		Choices: []wire.ChunkChoice{{Delta: delta}}})
	if err != nil {
		return err
	}
	sw.start()
	return sw.event("", b)
}

// finalChunk is the last chunk of a stream, whose cost is null rather than
// absent when no price is known.
type finalChunk struct {
	wire.Chunk
	Cost *wire.Cost `json:"cost"`
}

// final writes the last chunk event of a finished run: no piece of
// output, but the finish reason, the whole tool calls, the usage and the
// cost of res (nothing more when res is nil).
func (sw *sseWriter) final(res *completion.Response) error {
	sw.start()
	if res == nil || len(res.Choices) == 0 {
		return nil
	}
	choice := res.Choices[0]
	c := finalChunk{Chunk: wire.Chunk{ID: sw.id, Object: completion.ChunkObject, Created: sw.created,
		Choices: []wire.ChunkChoice{{FinishReason: choice.FinishReason, ToolCalls: wireToolCalls(choice.Message.ToolCalls)}},
		Usage:   &wire.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}}}
	if res.Cost != nil {
		c.Cost = &wire.Cost{Input: res.Cost.Input, Output: res.Cost.Output, Total: res.Cost.Total, Currency: res.Cost.Currency}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return sw.event("", b)
}

// wireToolCalls returns calls as the wire writes them.
func wireToolCalls(calls []model.ToolCall) []wire.ToolCall {
	var out []wire.ToolCall
	for _, c := range calls {
		out = append(out, wire.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// event writes one event (named when name is set) and flushes it.
func (sw *sseWriter) event(name string, data []byte) error {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := sw.w.Write([]byte(b.String())); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// requestMessages returns a request's messages as the service takes them:
// plain user contents when none has a role, else every message in
// Conversation with its role (a plain one as a user message), so that
// messages of both kinds keep their order.
func requestMessages(msgs []wire.CompletionMessage) (plain []string, conv []model.Message) {
	roles := false
	for _, m := range msgs {
		roles = roles || m.Role != ""
	}
	if !roles {
		for _, m := range msgs {
			plain = append(plain, m.Content)
		}
		return plain, nil
	}
	conv = make([]model.Message, 0, len(msgs))
	for _, m := range msgs {
		mm := model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		if mm.Role == "" {
			mm.Role = canvas.RoleUser
		}
		for _, c := range m.ToolCalls {
			mm.ToolCalls = append(mm.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		conv = append(conv, mm)
	}
	return nil, conv
}

// completionSettings returns a request's settings as the service takes
// them.
func completionSettings(st *wire.Settings) *completion.Settings {
	if st == nil {
		return nil
	}
	out := &completion.Settings{Model: st.Model, Temperature: st.Temperature, MaxTokens: st.MaxTokens, TopP: st.TopP,
		CredentialID: st.CredentialID}
	if so := st.StructuredOutput; so != nil {
		out.StructuredOutput = &canvas.StructuredOutput{Enabled: so.Enabled, Schema: so.Schema}
	}
	return out
}
