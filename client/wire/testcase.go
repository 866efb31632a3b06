package wire

import (
	"encoding/json"
	"time"
)

// Generation statuses.
const (
	GenerationInitializing = "initializing"
	GenerationRunning      = "running"
	GenerationCompleted    = "completed"
	GenerationFailed       = "failed"
	GenerationAborted      = "aborted"
)

// TestCase is a canvas' test case: the input of a run and how its output
// is graded. Its nullable fields are null when it has no value for them.
type TestCase struct {
	ID                   string               `json:"id"`
	PromptID             string               `json:"promptId"`
	Title                string               `json:"title"`
	Messages             []TestCaseMessage    `json:"messages"`
	Variables            map[string]any       `json:"variables"`
	VariablesRichContent map[string]any       `json:"variablesRichContent"`
	Files                []TestCaseFile       `json:"files"`
	ExpectedOutput       *string              `json:"expectedOutput"`
	Evaluator            *Evaluator           `json:"evaluator"`
	Answers              map[string]AnswerSet `json:"answers"`
	PromptApplicationID  *string              `json:"promptApplicationId"`
	Metadata             *TestCaseMetadata    `json:"metadata"`
	CreatedBy            string               `json:"createdBy"`
	UpdatedBy            string               `json:"updatedBy"`
	CreatedAt            time.Time            `json:"createdAt"`
	UpdatedAt            time.Time            `json:"updatedAt"`
	DeletedAt            *time.Time           `json:"deletedAt"`
	Tags                 []*Tag               `json:"tags"`
	// Generations are present only in a list asked for them.
	Generations []*Generation `json:"generations,omitzero"`
}

// TestCaseMessage is appended after the version's messages when the test
// case runs.
type TestCaseMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// TestCaseFile is a file a test case gives a file variable.
type TestCaseFile struct {
	Index        int    `json:"index"`
	Name         string `json:"name"`
	MimeType     string `json:"mimeType"`
	VaultURL     string `json:"vaultUrl"`
	VariableName string `json:"variableName"`
	URL          string `json:"url"`
}

// Evaluator says how a generation is graded.
type Evaluator struct {
	Type      string          `json:"type"`
	Pattern   string          `json:"pattern,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Threshold *float64        `json:"threshold,omitempty"`
}

// AnswerSet holds a test case's example answers.
type AnswerSet struct {
	Good  []json.RawMessage `json:"good"`
	Bad   []json.RawMessage `json:"bad"`
	Evals []json.RawMessage `json:"evals"`
}

// TestCaseMetadata says where a test case came from.
type TestCaseMetadata struct {
	Source string `json:"source"`
}

// Tag labels test cases of a canvas.
type Tag struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Color       string     `json:"color"`
	PromptID    string     `json:"promptId"`
	AgentID     *string    `json:"agentId"`
	WorkspaceID string     `json:"workspaceId"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	DeletedAt   *time.Time `json:"deletedAt"`
}

// CreateTestCaseParams is the body of POST /test-case.
type CreateTestCaseParams struct {
	PromptID             string               `json:"promptId"`
	Title                string               `json:"title,omitempty"`
	Messages             []TestCaseMessage    `json:"messages,omitempty"`
	Variables            map[string]any       `json:"variables,omitempty"`
	VariablesRichContent map[string]any       `json:"variablesRichContent,omitempty"`
	Files                []TestCaseFile       `json:"files,omitempty"`
	ExpectedOutput       *string              `json:"expectedOutput,omitempty"`
	Evaluator            *Evaluator           `json:"evaluator,omitempty"`
	Answers              map[string]AnswerSet `json:"answers,omitempty"`
	PromptApplicationID  *string              `json:"promptApplicationId,omitempty"`
	Metadata             *TestCaseMetadata    `json:"metadata,omitempty"`
}

// RunTestCaseRequest is the body of POST /test-case/{id}/run.
type RunTestCaseRequest struct {
	PromptVersionID string `json:"promptVersionId"`
}

// RunTestCaseResult is the answer to running test cases: the execution
// and the generations it started.
type RunTestCaseResult struct {
	ExecutionID   string   `json:"executionId"`
	TestCaseIDs   []string `json:"testCaseIds"`
	GenerationID  string   `json:"generationId,omitempty"`
	GenerationIDs []string `json:"generationIds"`
}

// Generation is one run of a test case against a version.
type Generation struct {
	ID              string           `json:"id"`
	TestCaseID      string           `json:"testCaseId"`
	PromptID        string           `json:"promptId"`
	PromptVersionID string           `json:"promptVersionId"`
	ExecutionID     string           `json:"executionId"`
	Status          string           `json:"status"`
	Output          *string          `json:"output"`
	Error           *GenerationError `json:"error"`
	Usage           *Usage           `json:"usage"`
	// Cost is null when no price of the model is known or the model was
	// not called.
	Cost        *Cost      `json:"cost"`
	LatencyMs   *int64     `json:"latencyMs"`
	Passed      *bool      `json:"passed"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	CompletedAt *time.Time `json:"completedAt"`
}

// GenerationError is why a generation failed.
type GenerationError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
