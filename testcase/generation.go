package testcase

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/model"
)

// Generation statuses. A generation is created initializing, in the same
// transaction as its job, so it can be polled or aborted at once.
const (
	GenerationInitializing = "initializing"
	GenerationRunning      = "running"
	GenerationCompleted    = "completed"
	GenerationFailed       = "failed"
	GenerationAborted      = "aborted"
)

// Usage counts the tokens of a generation's model calls.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// GenerationError says why a generation failed.
type GenerationError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Generation is one run of a test case against a version.
type Generation struct {
	ID              string           `json:"id"`
	WorkspaceID     string           `json:"-"`
	TestCaseID      string           `json:"testCaseId"`
	PromptID        string           `json:"promptId"`
	PromptVersionID string           `json:"promptVersionId"`
	ExecutionID     string           `json:"executionId"`
	Status          string           `json:"status"`
	Output          *string          `json:"output"`
	Error           *GenerationError `json:"error"`
	Usage           *Usage           `json:"usage"`
	// Cost is what the generation's model call cost, nil when no price of
	// the model is known or the model was not called.
	Cost      *model.Cost `json:"cost"`
	LatencyMs *int64      `json:"latencyMs"`
	// Passed is set when the test case has an expected output and the
	// generation completed; nil otherwise.
	Passed      *bool      `json:"passed"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	CompletedAt *time.Time `json:"completedAt"`
}

// GenerationFilter selects the generations listed with test cases.
type GenerationFilter struct {
	WorkspaceID string
	TestCaseIDs []string
	// PromptVersionIDs, when not empty, keeps only generations of these
	// versions.
	PromptVersionIDs []string
}

// GenerationLister is the part of the generation store that listing test
// cases with their generations needs.
type GenerationLister interface {
	// ListGenerations returns the generations of the filter's test cases,
	// keyed by test case id, newest first within each.
	ListGenerations(ctx context.Context, f GenerationFilter) (map[string][]*Generation, error)
}
