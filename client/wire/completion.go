package wire

import "time"

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
}

// CompletionMessage is a message added after the version's own.
type CompletionMessage struct {
	Content string `json:"content"`
}

// Settings override a version's model configuration for one run; absent
// fields keep it.
type Settings struct {
	Model            *string           `json:"model,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
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
	ID        string   `json:"id"`
	Object    string   `json:"object"`
	Created   int64    `json:"created"`
	Choices   []Choice `json:"choices"`
	Usage     Usage    `json:"usage"`
	VersionID string   `json:"versionId,omitempty"`
	Model     string   `json:"model,omitempty"`
}

// Choice is one answer of the model.
type Choice struct {
	Index        int           `json:"index"`
	Message      ChoiceMessage `json:"message"`
	FinishReason string        `json:"finishReason,omitempty"`
}

// ChoiceMessage is the message of a choice.
type ChoiceMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
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

// Chunk is the data of one event of a streamed completion; the stream
// ends with the data "[DONE]", or with an "error" event whose data is an
// ErrorBody.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Choices []ChunkChoice `json:"choices"`
}

// ChunkChoice is one choice of a Chunk.
type ChunkChoice struct {
	Index int        `json:"index"`
	Delta ChunkDelta `json:"delta"`
}

// ChunkDelta is the piece of output a ChunkChoice carries.
type ChunkDelta struct {
	Content Content `json:"content"`
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
	ApplicationID   string `json:"applicationId,omitempty"`
	Model           string `json:"model"`
	Status          string `json:"status"`
	// WorkflowStatus is the workflow run's status, for a run of a
	// workflow version.
	WorkflowStatus string       `json:"workflowStatus,omitempty"`
	Async          bool         `json:"async"`
	Request        ModelRequest `json:"request"`
	Result         *Response    `json:"result,omitempty"`
	Error          *RunError    `json:"error,omitempty"`
	Usage          Usage        `json:"usage"`
	LatencyMs      int64        `json:"latencyMs"`
	WebhookURL     string       `json:"webhookUrl,omitempty"`
	CreatedBy      string       `json:"createdBy"`
	CreatedAt      time.Time    `json:"createdAt"`
	UpdatedAt      time.Time    `json:"updatedAt"`
	CompletedAt    *time.Time   `json:"completedAt"`
}

// RunError is why a run failed.
type RunError struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details,omitempty"`
}

// ModelRequest is what a run asked the model.
type ModelRequest struct {
	Messages         []ModelMessage    `json:"messages"`
	Model            string            `json:"model"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
}

// ModelMessage is one rendered message sent to the model.
type ModelMessage struct {
	Role     string    `json:"role"`
	Content  string    `json:"content"`
	FileRefs []FileRef `json:"fileRefs,omitempty"`
}

// FileRef is where a file variable's value sits in a rendered message.
type FileRef struct {
	Variable   string `json:"variable"`
	URL        string `json:"url"`
	Multimodal bool   `json:"multimodal,omitempty"`
	Start      int    `json:"start"`
	End        int    `json:"end"`
}
