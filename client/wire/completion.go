package wire

import (
	"encoding/json"
	"time"
)

// Completion run kinds and statuses.
const (
	KindCompletion = "completion"
	KindTask       = "task"
	KindWorkflow   = "workflow"

	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Object values of completion answers.
const (
	ResponseObject    = "chat.completion"
	ChunkObject       = "chat.completion.chunk"
	AsyncObject       = "chat.completion.async"
	WorkflowRunObject = "workflow.run"
)

// CompletionRequest is the body of POST /v2/chat/completions. The target
// is EnvironmentName, else VersionID, else ApplicationID, else the
// promoted version. Async (or a WebhookURL) queues the run and answers
// 202; Stream answers with server-sent events (Chunk).
type CompletionRequest struct {
	CanvasID        string              `json:"canvas_id"`
	Variables       map[string]any      `json:"variables,omitempty"`
	Messages        []CompletionMessage `json:"messages,omitempty"`
	WebhookURL      string              `json:"webhook_url,omitempty"`
	Stream          bool                `json:"stream,omitempty"`
	Async           bool                `json:"async,omitempty"`
	EnvironmentName string              `json:"environment_name,omitempty"`
	VersionID       string              `json:"version_id,omitempty"`
	ApplicationID   string              `json:"application_id,omitempty"`
	Settings        *Settings           `json:"settings,omitempty"`
	// AssignmentKey picks the version of a split publication that serves
	// the run: the same key gets the same version while the publication
	// is active; without one each run draws.
	AssignmentKey string `json:"assignment_key,omitempty"`
}

// CompletionMessage is a message added after the version's own: a user
// message when Role is empty, else a message of that role (RoleSystem,
// RoleUser, RoleAssistant or RoleTool). An assistant message may carry the
// tool calls the model made (ToolCalls), and a tool message answers the
// call ToolCallID with its Content, so that a client runs a tool loop.
type CompletionMessage struct {
	Role       string     `json:"role,omitempty"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// RoleTool is the role of a message that answers a tool call.
const RoleTool = "tool"

// FinishToolCalls is the finish reason of an answer that calls tools.
const FinishToolCalls = "tool_calls"

// ToolCall is one call of a declared function by the model: its id, the
// function's name and its arguments (a JSON object).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolCallDelta is a piece of a streamed tool call: Index tells the calls
// of one answer apart, the first piece of a call carries its ID and Name,
// and Arguments the next piece of the arguments' JSON text.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Cost is what a run cost, in Currency ("USD"); null where no price of its
// model is known.
type Cost struct {
	Input    float64 `json:"input"`
	Output   float64 `json:"output"`
	Total    float64 `json:"total"`
	Currency string  `json:"currency"`
}

// Settings override a version's model configuration for one run; absent
// fields keep it.
type Settings struct {
	Model            *string           `json:"model,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
	// CredentialID runs on that credential of the workspace.
	CredentialID *string `json:"credentialId,omitempty"`
}

// Accepted is the 202 answer to an asynchronous completion (Object
// AsyncObject), to a task (no Object), and to a completion of a workflow
// version whose run paused (Object WorkflowRunObject, with ExecutionID).
type Accepted struct {
	ID          string `json:"id"`
	Object      string `json:"object,omitempty"`
	Status      string `json:"status"`
	ExecutionID string `json:"executionId,omitempty"`
}

// TaskRequest is the body of POST /v1/tasks.
type TaskRequest struct {
	Prompt     string         `json:"prompt"`
	Model      string         `json:"model,omitempty"`
	WebhookURL string         `json:"webhook_url,omitempty"`
	Variables  map[string]any `json:"variables,omitempty"`
}

// Response is the answer of a completion: the 200 of a synchronous one, and
// a finished run's Result.
type Response struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
	// Cost is null when no price of the model that answered is known.
	Cost      *Cost  `json:"cost"`
	VersionID string `json:"versionId,omitempty"`
	Model     string `json:"model,omitempty"`
}

// Choice is one answer of the model.
type Choice struct {
	Index        int           `json:"index"`
	Message      ChoiceMessage `json:"message"`
	FinishReason string        `json:"finishReason,omitempty"`
}

// ChoiceMessage is the message of a choice; ToolCalls are the calls the
// model made (FinishReason FinishToolCalls).
type ChoiceMessage struct {
	Role      string     `json:"role"`
	Content   Content    `json:"content"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
}

// Content is the text of a message or of a stream chunk.
type Content struct {
	Text string `json:"text"`
}

// Usage counts the tokens of a model call.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Chunk is the data of one event of a streamed completion. Each chunk
// carries a piece of text or of a tool call in its choice's Delta; the
// last chunk, the one with Usage, carries no piece but the choice's
// FinishReason and whole ToolCalls, the Usage and the Cost (null when no
// price is known). The stream then ends with the data "[DONE]"; a failure
// ends it with an "error" event whose data is an ErrorBody instead.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
	Cost    *Cost         `json:"cost,omitempty"`
}

// ChunkChoice is one choice of a Chunk; FinishReason and ToolCalls are set
// on the last chunk only.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason string     `json:"finishReason,omitempty"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
}

// ChunkDelta is the piece of output a ChunkChoice carries: text, or a
// piece of a tool call (ToolCall, with an empty text).
type ChunkDelta struct {
	Content  Content        `json:"content"`
	ToolCall *ToolCallDelta `json:"toolCall,omitempty"`
}

// Run is a completion or task run (GET /v2/chat/completions/{id}, GET
// /v1/tasks/{id}): its state and, once it ended, its Result or Error.
type Run struct {
	ID              string `json:"id"`
	WorkspaceID     string `json:"workspaceId"`
	Kind            string `json:"kind"`
	CanvasID        string `json:"canvasId,omitempty"`
	VersionID       string `json:"versionId,omitempty"`
	EnvironmentName string `json:"environmentName,omitempty"`
	// Includes are what the includes of the version's messages resolved
	// to when the run was rendered.
	Includes []Include `json:"includes,omitempty"`
	// PublicationID is the publication that served the run through an
	// environment; Variant, for a split publication, the position of the
	// split entry that answered.
	PublicationID string `json:"publicationId,omitempty"`
	Variant       *int   `json:"variant,omitempty"`
	ApplicationID string `json:"applicationId,omitempty"`
	Model         string `json:"model"`
	Status        string `json:"status"`
	// WorkflowStatus is the workflow run's status, for a run of a
	// workflow version.
	WorkflowStatus string `json:"workflowStatus,omitempty"`
	Async          bool   `json:"async"`
	// Stream says that the answer was streamed to the caller as it came.
	Stream bool `json:"stream"`
	// Variables are the values the version was rendered with.
	Variables map[string]any `json:"variables,omitempty"`
	Request   ModelRequest   `json:"request"`
	Result    *Response      `json:"result,omitempty"`
	Error     *RunError      `json:"error,omitempty"`
	Usage     Usage          `json:"usage"`
	// Cost is null when no price of the run's model is known, or before
	// it ran.
	Cost      *Cost `json:"cost"`
	LatencyMs int64 `json:"latencyMs"`
	// CredentialID and Provider say who answered: a credential of the
	// workspace and its provider; empty for the server's own back ends.
	CredentialID string     `json:"credentialId,omitempty"`
	Provider     string     `json:"provider,omitempty"`
	WebhookURL   string     `json:"webhookUrl,omitempty"`
	CreatedBy    string     `json:"createdBy"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	CompletedAt  *time.Time `json:"completedAt"`
	// Feedback is the end user's feedback on the run, when it has some.
	Feedback *Feedback `json:"feedback,omitempty"`
}

// FeedbackRequest is the body of POST /v2/chat/completions/{id}/feedback:
// a score from 0 (worst) to 1 (best) and an optional comment.
type FeedbackRequest struct {
	Score   float64 `json:"score"`
	Comment *string `json:"comment,omitempty"`
}

// Feedback is an end user's feedback on a run: one per run, replaced when
// given again.
type Feedback struct {
	RunID     string    `json:"runId"`
	Score     float64   `json:"score"`
	Comment   *string   `json:"comment"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// RunError is why a run failed.
type RunError struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
}

// ModelRequest is what a run asked the model: the messages, the settings,
// the functions it may call and who serves it (Provider and CredentialID,
// empty for the server's own back ends), with the fallbacks.
type ModelRequest struct {
	Messages         []ModelMessage    `json:"messages"`
	Model            string            `json:"model"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
	Tools            []Function        `json:"tools,omitempty"`
	// ToolChoice is "auto", "none", "required" or {"name": ...}.
	ToolChoice   json.RawMessage `json:"toolChoice,omitempty"`
	Provider     string          `json:"provider,omitempty"`
	CredentialID string          `json:"credentialId,omitempty"`
	Fallbacks    []ModelTarget   `json:"fallbacks,omitempty"`
}

// Function is a function a version declares (configuration.functions):
// Parameters is a JSON Schema object.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ModelTarget is a model and who serves it.
type ModelTarget struct {
	Model        string `json:"model"`
	Provider     string `json:"provider,omitempty"`
	CredentialID string `json:"credentialId,omitempty"`
}

// ModelMessage is one rendered message sent to the model, with the tool
// calls of an assistant message and the call a tool message answers.
type ModelMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	FileRefs   []FileRef  `json:"fileRefs,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// FileRef is where a file variable's value sits in a rendered message.
type FileRef struct {
	Variable   string `json:"variable"`
	URL        string `json:"url"`
	Multimodal bool   `json:"multimodal,omitempty"`
	Start      int    `json:"start"`
	End        int    `json:"end"`
}

// RunPage is a page of runs (GET /v2/chat/completions, GET /v1/tasks);
// Totals is present when the list was asked for them (totals=true).
type RunPage struct {
	Page[Run]
	Totals *RunTotals `json:"totals,omitempty"`
}

// RunSum adds up runs: how many, their tokens, the sum of the costs that
// are known (null when none is), and how many completed runs have no cost
// because no price of their model is known.
type RunSum struct {
	Count        int   `json:"count"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	Cost         *Cost `json:"cost"`
	Unpriced     int   `json:"unpriced"`
}

// RunGroupSum is the RunSum of the runs of one version of a canvas; both
// ids are absent for tasks.
type RunGroupSum struct {
	CanvasID  string `json:"canvasId,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	RunSum
}

// RunTotals sum every run a list selects, not only one page: in all, and
// by canvas and version (at most 100 groups, the most runs first;
// GroupCount counts them all).
type RunTotals struct {
	RunSum
	Groups     []RunGroupSum `json:"groups"`
	GroupCount int           `json:"groupCount"`
}
