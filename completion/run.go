package completion

import (
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Run kinds.
const (
	KindCompletion = "completion"
	KindTask       = "task"
)

// Run statuses. Completed and failed are terminal.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Queue job kinds of asynchronous runs; the service's HandleJob executes
// both.
const (
	JobKindCompletion = "completion.run"
	JobKindTask       = "task.run"
)

// Run is the record of one execution: a completion of a canvas version, or a
// one-off task. Every run is recorded, sync and streamed ones once answered,
// async ones from the moment they are accepted.
type Run struct {
	ID              string `json:"id"`
	WorkspaceID     string `json:"workspaceId"`
	Kind            string `json:"kind"`
	CanvasID        string `json:"canvasId,omitempty"`
	VersionID       string `json:"versionId,omitempty"`
	EnvironmentName string `json:"environmentName,omitempty"`
	// Includes are what the includes of the version's messages resolved
	// to, each reference once; nil when it has none.
	Includes []canvas.Include `json:"includes,omitempty"`
	// PublicationID is the publication that served the run through an
	// environment, "" otherwise; Variant is, for a split publication, the
	// position (0-based) of the split entry that answered, nil otherwise.
	PublicationID string `json:"publicationId,omitempty"`
	Variant       *int   `json:"variant,omitempty"`
	ApplicationID string `json:"applicationId,omitempty"`
	Model         string `json:"model"`
	Status        string `json:"status"`
	// WorkflowStatus is the workflow run's status when the target was a
	// workflow version (Kind KindWorkflow); ID is then its execution id.
	WorkflowStatus string `json:"workflowStatus,omitempty"`
	Async          bool   `json:"async"`
	// Stream says that the answer was streamed to the caller as it came
	// (the request's stream: true); an asynchronous run is never streamed.
	Stream bool `json:"stream"`
	// Variables are the values the version was rendered with, kept so
	// that a test case can be made of the run.
	Variables map[string]any `json:"variables,omitempty"`
	// Request is everything needed to execute the run later: the rendered
	// messages and the effective settings. It is shown as the run's
	// rendered input.
	Request model.Request `json:"request"`
	// Result is the completion response of a completed run.
	Result *Response `json:"result,omitempty"`
	// Error says why a failed run failed.
	Error *RunError   `json:"error,omitempty"`
	Usage model.Usage `json:"usage"`
	// Cost is what the run cost, nil when no price of its model is known
	// (or it has not run yet).
	Cost      *model.Cost `json:"cost"`
	LatencyMs int64       `json:"latencyMs"`
	// CredentialID and Provider say who answered: a workspace credential
	// and its provider, or "" for the server's own back ends (the offline
	// echo model, the server-wide back end).
	CredentialID string `json:"credentialId,omitempty"`
	Provider     string `json:"provider,omitempty"`
	// WebhookURL receives the notification when the run finishes, with
	// ForwardHeaders; both are kept with the run so that a restart still
	// delivers them.
	WebhookURL     string           `json:"webhookUrl,omitempty"`
	ForwardHeaders []webhook.Header `json:"-"`
	CreatedBy      string           `json:"createdBy"`
	CreatedAt      time.Time        `json:"createdAt"`
	UpdatedAt      time.Time        `json:"updatedAt"`
	CompletedAt    *time.Time       `json:"completedAt"`
	// Feedback is the end user's feedback on the run, when it has some
	// and was read with it (Service.GetRun).
	Feedback *Feedback `json:"feedback,omitempty"`
}

// Terminal reports whether the run has finished.
func (r *Run) Terminal() bool { return r.Status == StatusCompleted || r.Status == StatusFailed }

// RunError is the error of a failed run: a canvas error code (or
// canvas.ECANCELLED for a run whose caller went away before the model
// finished), a message safe to show, and the details.
type RunError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details []canvas.Detail `json:"details,omitempty"`
}

// Err returns the run error as a *canvas.Error.
func (e *RunError) Err() error {
	return &canvas.Error{Code: e.Code, Message: e.Message, Details: e.Details}
}

// runError turns err into the RunError recorded on a failed run, never
// leaking an internal cause.
func runError(err error) *RunError {
	return &RunError{Code: canvas.ErrorCode(err), Message: canvas.ErrorMessage(err), Details: canvas.ErrorDetails(err)}
}

// Response is the completion response of the spec: the model's answer as one
// assistant message, plus the token usage, the version that ran and the
// model that answered.
type Response struct {
	ID        string      `json:"id"`
	Object    string      `json:"object"`
	Created   int64       `json:"created"`
	Choices   []Choice    `json:"choices"`
	Usage     model.Usage `json:"usage"`
	Cost      *model.Cost `json:"cost"`
	VersionID string      `json:"versionId,omitempty"`
	Model     string      `json:"model,omitempty"`
}

// Choice is one answer of a completion response.
type Choice struct {
	Index        int           `json:"index"`
	Message      ChoiceMessage `json:"message"`
	FinishReason string        `json:"finishReason,omitempty"`
}

// ChoiceMessage is the assistant message of a choice.
type ChoiceMessage struct {
	Role      string           `json:"role"`
	Content   Content          `json:"content"`
	ToolCalls []model.ToolCall `json:"toolCalls,omitempty"`
}

// Content is the text of a message in a completion response or chunk.
type Content struct {
	Text string `json:"text"`
}

// ResponseObject and ChunkObject are the object values of a completion
// response and of a streamed chunk; AsyncObject is that of the answer to an
// asynchronous request.
const (
	ResponseObject = "chat.completion"
	ChunkObject    = "chat.completion.chunk"
	AsyncObject    = "chat.completion.async"
)

// newResponse is the completion response of run id for res.
func newResponse(id string, created time.Time, versionID string, res *model.Result) *Response {
	return &Response{
		ID: id, Object: ResponseObject, Created: created.Unix(),
		Choices: []Choice{{Message: ChoiceMessage{Role: canvas.RoleAssistant, Content: Content{Text: res.Text},
			ToolCalls: res.ToolCalls}, FinishReason: res.FinishReason}},
		Usage: res.Usage, Cost: res.Cost, VersionID: versionID, Model: res.Model,
	}
}
