package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// registerOpenAIRoutes mounts the OpenAI-compatible entry point: programs
// that speak OpenAI's Chat Completions API run canvases by naming them as
// the model. Runs go through the completion service as any completion does
// (recorded, priced, notified, limited); only the wire format is OpenAI's.
func (s *Server) registerOpenAIRoutes() {
	s.route("POST /openai/v1/chat/completions", s.handleOpenAIChatCompletion)
	s.route("GET /openai/v1/models", s.handleOpenAIModels)
}

// openAIPathPrefix starts the paths of the OpenAI entry point, whose error
// bodies also carry the error in OpenAI's shape (withOpenAIError).
const openAIPathPrefix = "/openai/"

// openAIModelPrefix starts every model name of the OpenAI entry point.
const openAIModelPrefix = "canvas:"

// openAIVersionNumber matches a target that names a version by its number
// in the canvas's history ("v3").
var openAIVersionNumber = regexp.MustCompile(`^v([1-9][0-9]{0,8})$`)

// openAIRequest is the body of POST /openai/v1/chat/completions: the part of
// OpenAI's chat completion request that a canvas run takes, and
// prompt_variables, the values of the version's {{variable}} placeholders.
type openAIRequest struct {
	Model               string            `json:"model"`
	Messages            []openAIMessage   `json:"messages"`
	Stream              bool              `json:"stream"`
	StreamOptions       *openAIStreamOpts `json:"stream_options"`
	Temperature         *float64          `json:"temperature"`
	TopP                *float64          `json:"top_p"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	PromptVariables     map[string]any    `json:"prompt_variables"`
	ApplicationID       string            `json:"application_id"`
}

type openAIStreamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

// openAIMessage is a message of a request or of an answer.
type openAIMessage struct {
	Role string `json:"role"`
	// Content is a string, an array of text parts, or null.
	Content    json.RawMessage  `json:"content"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openAIToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function openAIFunctionCall `json:"function"`
}

type openAIFunctionCall struct {
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments object.
	Arguments string `json:"arguments"`
}

// handleOpenAIChatCompletion runs the canvas the request's model names and
// answers in OpenAI's chat.completion format, or as a stream of
// chat.completion.chunk events ending with "data: [DONE]".
func (s *Server) handleOpenAIChatCompletion(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.completionsService()
	if err != nil {
		return err
	}
	var req openAIRequest
	if err := s.decodeJSON(r, "OpenAIChatCompletionRequest", &req); err != nil {
		return err
	}
	params, err := s.openAIRunParams(r, req)
	if err != nil {
		return err
	}
	if req.Stream {
		return s.streamOpenAI(w, r, svc, params, req)
	}
	run, err := svc.Run(r.Context(), params)
	if err != nil {
		return err
	}
	if run.Paused() {
		return openAIPaused(run)
	}
	writeJSON(w, http.StatusOK, newOpenAICompletion(run))
	return nil
}

// openAIPaused is the error of a workflow version that paused for review
// or input: the OpenAI format has no answer for it, the workflow routes
// go on with it.
func openAIPaused(run *completion.Run) error {
	return canvas.Errorf(canvas.ECONFLICT,
		"The workflow run %s paused (%s) before its output; continue it through /workflow/runs/%s.",
		run.ID, run.WorkflowStatus, run.ID)
}

// openAIRunParams turns a request into the run it asks for: the canvas and
// target of its model, its messages after the version's own, its variables
// and settings.
func (s *Server) openAIRunParams(r *http.Request, req openAIRequest) (completion.RunParams, error) {
	params := completion.RunParams{Variables: req.PromptVariables, ApplicationID: req.ApplicationID,
		ForwardHeaders: webhook.ForwardedHeaders(r.Header)}
	canvasID, target, err := parseOpenAIModel(req.Model)
	if err != nil {
		return params, err
	}
	params.CanvasID = canvasID
	switch m := openAIVersionNumber.FindStringSubmatch(target); {
	case req.ApplicationID != "" && target != "":
		return params, canvas.Invalid("Request body failed validation.", canvas.Detail{Path: "/json/model",
			Message: "must name the canvas alone (canvas:<id>) with application_id: the application's environment is the target"})
	case target == "" && req.ApplicationID == "":
		params.EnvironmentName = canvas.ProductionEnvironment
	case target == "":
	case m != nil:
		n, _ := strconv.Atoi(m[1])
		if params.VersionID, err = s.versionNumbered(r, canvasID, n); err != nil {
			return params, err
		}
	case isUUID(target):
		params.VersionID = target
	default:
		params.EnvironmentName = target
	}
	var bad []canvas.Detail
	for i, m := range req.Messages {
		msg, problem := m.model()
		if problem != nil {
			problem.Path = fmt.Sprintf("/json/messages/%d%s", i, problem.Path)
			bad = append(bad, *problem)
			continue
		}
		params.Conversation = append(params.Conversation, msg)
	}
	if len(bad) > 0 {
		return params, canvas.Invalid("Request body failed validation.", bad...)
	}
	st := &completion.Settings{Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxCompletionTokens}
	if st.MaxTokens == nil {
		st.MaxTokens = req.MaxTokens
	}
	if st.Temperature != nil || st.TopP != nil || st.MaxTokens != nil {
		params.Settings = st
	}
	return params, nil
}

// parseOpenAIModel reads a model name of the OpenAI entry point:
// canvas:<id> (target "": the version in production, or the application's
// environment), canvas:<id>@<target> where target is an environment name,
// v<number> or a version id.
func parseOpenAIModel(name string) (canvasID, target string, err error) {
	rest, ok := strings.CutPrefix(name, openAIModelPrefix)
	id, target, _ := strings.Cut(rest, "@")
	if !ok || !isUUID(id) || (strings.Contains(rest, "@") && target == "") {
		return "", "", canvas.Invalid("Request body failed validation.", canvas.Detail{Path: "/json/model",
			Message: "must name a canvas: canvas:<id>, canvas:<id>@<environment>, canvas:<id>@v<number> or canvas:<id>@<version id>"})
	}
	return id, target, nil
}

// versionNumbered returns the id of the live version of a canvas at
// position n of its history; NOT_FOUND when there is none.
func (s *Server) versionNumbered(r *http.Request, canvasID string, n int) (string, error) {
	versions, err := s.canvases.ListVersions(r.Context(), canvas.ListVersionsParams{PromptID: canvasID})
	if err != nil {
		return "", err
	}
	for _, v := range versions {
		if v.VersionIndex == n {
			return v.ID, nil
		}
	}
	return "", canvas.Errorf(canvas.ENOTFOUND, "The canvas has no version %d.", n)
}

func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// model returns the message as the completion service takes it: developer
// is system, content parts are joined, a tool call's arguments are an
// object (model.Arguments). A content part that is not text is a problem
// at its pointer under the message.
func (m openAIMessage) model() (model.Message, *canvas.Detail) {
	out := model.Message{Role: m.Role, ToolCallID: m.ToolCallID}
	if out.Role == "developer" {
		out.Role = canvas.RoleSystem
	}
	var text string
	if err := json.Unmarshal(m.Content, &text); err != nil && len(m.Content) > 0 && string(m.Content) != "null" {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return out, &canvas.Detail{Path: "/content", Message: "must be a string or an array of text parts"}
		}
		var b strings.Builder
		for i, p := range parts {
			if p.Type != "text" {
				return out, &canvas.Detail{Path: fmt.Sprintf("/content/%d/type", i), Message: `must be "text": only text parts are supported`}
			}
			b.WriteString(p.Text)
		}
		text = b.String()
	}
	out.Content = text
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: model.Arguments(c.Function.Arguments)})
	}
	return out, nil
}

// openAICompletion is OpenAI's chat.completion object.
type openAICompletion struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	Choices           []openAIChoice `json:"choices"`
	Usage             openAIUsage    `json:"usage"`
	SystemFingerprint *string        `json:"system_fingerprint"`
}

type openAIChoice struct {
	Index        int                 `json:"index"`
	Message      openAIAnswerMessage `json:"message"`
	FinishReason string              `json:"finish_reason"`
	Logprobs     *struct{}           `json:"logprobs"`
}

// openAIAnswerMessage is the assistant message of an answer; content is
// null when the answer is only tool calls.
type openAIAnswerMessage struct {
	Role      string           `json:"role"`
	Content   *string          `json:"content"`
	Refusal   *string          `json:"refusal"`
	ToolCalls []openAIToolCall `json:"tool_calls,omitempty"`
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// newOpenAICompletion is the answer of a finished run in OpenAI's format.
// Its id is the run's, so that GET /v2/chat/completions/{id} reads the run.
func newOpenAICompletion(run *completion.Run) openAICompletion {
	out := openAICompletion{ID: run.ID, Object: completion.ResponseObject, Created: run.CreatedAt.Unix(),
		Model: run.Model, Choices: []openAIChoice{}}
	res := run.Result
	if res == nil {
		return out
	}
	if res.Model != "" {
		out.Model = res.Model
	}
	out.Usage = newOpenAIUsage(res.Usage)
	for _, c := range res.Choices {
		msg := openAIAnswerMessage{Role: canvas.RoleAssistant, ToolCalls: openAIToolCalls(c.Message.ToolCalls)}
		if text := c.Message.Content.Text; text != "" || len(msg.ToolCalls) == 0 {
			msg.Content = &text
		}
		out.Choices = append(out.Choices, openAIChoice{Index: c.Index, Message: msg, FinishReason: openAIFinishReason(c.FinishReason)})
	}
	return out
}

func newOpenAIUsage(u model.Usage) openAIUsage {
	return openAIUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

func openAIToolCalls(calls []model.ToolCall) []openAIToolCall {
	var out []openAIToolCall
	for _, c := range calls {
		out = append(out, openAIToolCall{ID: c.ID, Type: "function", Function: openAIFunctionCall{Name: c.Name, Arguments: string(c.Arguments)}})
	}
	return out
}

// openAIFinishReason maps a finish reason to one of OpenAI's: stop,
// length, tool_calls and content_filter pass as they are, anything else is
// stop.
func openAIFinishReason(r string) string {
	switch r {
	case "length", "tool_calls", "content_filter":
		return r
	}
	return "stop"
}

// openAIChunk is OpenAI's chat.completion.chunk object.
type openAIChunk struct {
	ID                string              `json:"id"`
	Object            string              `json:"object"`
	Created           int64               `json:"created"`
	Model             string              `json:"model"`
	Choices           []openAIChunkChoice `json:"choices"`
	Usage             *openAIUsage        `json:"usage,omitempty"`
	SystemFingerprint *string             `json:"system_fingerprint"`
}

type openAIChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openAIDelta `json:"delta"`
	FinishReason *string     `json:"finish_reason"`
	Logprobs     *struct{}   `json:"logprobs"`
}

type openAIDelta struct {
	Role      string                `json:"role,omitempty"`
	Content   *string               `json:"content,omitempty"`
	ToolCalls []openAIToolCallDelta `json:"tool_calls,omitempty"`
}

type openAIToolCallDelta struct {
	Index    int                `json:"index"`
	ID       string             `json:"id,omitempty"`
	Type     string             `json:"type,omitempty"`
	Function openAIFunctionCall `json:"function"`
}

// openAIStream writes a run's output as chat.completion.chunk events.
type openAIStream struct {
	sse   *sseWriter
	model string
	// roleSent tells whether the first delta, which carries the role, is
	// written.
	roleSent bool
}

func (st *openAIStream) write(c openAIChunk) error {
	c.ID, c.Object, c.Created, c.Model = st.sse.id, completion.ChunkObject, st.sse.created, st.model
	if c.Choices == nil {
		c.Choices = []openAIChunkChoice{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	st.sse.start()
	return st.sse.event("", b)
}

// chunk writes a piece of output as one delta; the first delta carries the
// assistant role.
func (st *openAIStream) chunk(c model.Chunk) error {
	d := openAIDelta{}
	if !st.roleSent {
		d.Role, st.roleSent = canvas.RoleAssistant, true
	}
	if c.Text != "" || c.ToolCall == nil {
		text := c.Text
		d.Content = &text
	}
	if tc := c.ToolCall; tc != nil {
		td := openAIToolCallDelta{Index: tc.Index, ID: tc.ID, Function: openAIFunctionCall{Name: tc.Name, Arguments: tc.Arguments}}
		if tc.ID != "" {
			td.Type = "function"
		}
		d.ToolCalls = []openAIToolCallDelta{td}
	}
	return st.write(openAIChunk{Choices: []openAIChunkChoice{{Delta: d}}})
}

// streamOpenAI answers a streamed request: a delta per piece of output, a
// last chunk with the finish reason, a chunk with the usage when
// stream_options.include_usage asks for it, and "data: [DONE]". A failure
// before the first byte is an ordinary error response; after it, an event
// whose data is the error body with its "error" member in OpenAI's shape
// (withOpenAIError), as OpenAI's clients read it.
func (s *Server) streamOpenAI(w http.ResponseWriter, r *http.Request, svc *completion.Service, params completion.RunParams, req openAIRequest) error {
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	st := &openAIStream{sse: sw}
	params.Started = func(run *completion.Run) {
		sw.id, sw.created, st.model = run.ID, run.CreatedAt.Unix(), run.Model
	}
	params.Stream = st.chunk
	run, err := svc.Run(r.Context(), params)
	if err == nil && run.Paused() && !sw.started {
		err = openAIPaused(run)
	}
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
		body, merr := json.Marshal(withOpenAIError(newErrorBody(code, err, requestIDFrom(r.Context())), ErrorStatus(code)))
		if merr != nil {
			return merr
		}
		if werr := sw.event("", body); werr != nil {
			s.logger.DebugContext(r.Context(), "stream error event not sent", slog.Any("error", werr))
		}
		return nil
	}
	final := newOpenAICompletion(run)
	st.model = final.Model
	reason := "stop"
	if len(final.Choices) > 0 {
		reason = final.Choices[0].FinishReason
	}
	if err := st.write(openAIChunk{Choices: []openAIChunkChoice{{Delta: openAIDelta{}, FinishReason: &reason}}}); err != nil {
		return nil // the client is gone; the run is recorded
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if err := st.write(openAIChunk{Usage: &final.Usage}); err != nil {
			return nil
		}
	}
	_ = sw.event("", []byte("[DONE]"))
	return nil
}

// openAIModel is an entry of GET /openai/v1/models.
type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// handleOpenAIModels lists, in OpenAI's format, the model names of the
// canvases the caller can reach that have a version in production:
// canvas:<id>, oldest canvas first. Other targets of a canvas
// (@<environment>, @v<number>) are not listed but may be named.
func (s *Server) handleOpenAIModels(w http.ResponseWriter, r *http.Request) error {
	list, err := s.canvases.ListCanvases(r.Context(), canvas.ListCanvasesParams{IncludePromotedVersion: true})
	if err != nil {
		return err
	}
	models := []openAIModel{}
	for _, c := range list {
		if c.Versions == nil || c.Versions.Promoted == nil {
			continue
		}
		models = append(models, openAIModel{ID: openAIModelPrefix + c.ID, Object: "model", Created: c.CreatedAt.Unix(), OwnedBy: c.WorkspaceID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": models})
	return nil
}

// openAIErrorBody is an error body of the OpenAI entry point: this API's
// error body, and the same error in OpenAI's shape under "error", which
// OpenAI's clients read.
type openAIErrorBody struct {
	wire.ErrorBody
	Error openAIError `json:"error"`
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// withOpenAIError adds OpenAI's shape to an error body of the given
// status: the message followed by every detail, the error type OpenAI
// gives that status, and the body member of the first detail as param.
func withOpenAIError(body wire.ErrorBody, status int) openAIErrorBody {
	msg := body.Message
	for _, d := range body.Details {
		msg += " " + d.Path + ": " + d.Message + "."
	}
	oe := openAIError{Message: msg, Code: body.Code, Type: "api_error"}
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity,
		http.StatusMethodNotAllowed, http.StatusRequestHeaderFieldsTooLarge:
		oe.Type = "invalid_request_error"
	case http.StatusUnauthorized:
		oe.Type = "authentication_error"
	case http.StatusForbidden:
		oe.Type = "permission_error"
	case http.StatusNotFound:
		oe.Type = "not_found_error"
	case http.StatusConflict:
		oe.Type = "conflict_error"
	case http.StatusTooManyRequests:
		oe.Type = "rate_limit_error"
	}
	if len(body.Details) > 0 {
		if param, ok := strings.CutPrefix(body.Details[0].Path, "/json/"); ok {
			oe.Param = &param
		}
	}
	return openAIErrorBody{ErrorBody: body, Error: oe}
}
