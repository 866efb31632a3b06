package testcase

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
)

// GenerationStore is the persistence of generations. Implementations set
// timestamps from one clock reading per transaction, keep ID when it is set
// (and assign one when empty), and scope every read to a workspace: a
// generation of another workspace is NOT_FOUND.
type GenerationStore interface {
	GenerationLister
	// CreateGenerations inserts gens, each initializing, and jobs, where
	// jobs[i] executes gens[i] (its RefID is set to gens[i].ID), in one
	// transaction: a generation that can be read always has its job.
	CreateGenerations(ctx context.Context, gens []*Generation, jobs []*queue.Job) error
	// GetGeneration returns a generation of the workspace.
	GetGeneration(ctx context.Context, workspaceID, id string) (*Generation, error)
	// StartGeneration moves an initializing or running generation to
	// running and returns it; a terminal one is CONFLICT.
	StartGeneration(ctx context.Context, workspaceID, id string) (*Generation, error)
	// FinishGeneration writes g's final state (completed or failed, with
	// output, error, usage, latency and passed) only when the stored
	// generation is initializing or running; otherwise it is CONFLICT and
	// nothing is written, so that an aborted generation stays aborted.
	// When outbox is not nil it is called in the same transaction with g
	// as written (UpdatedAt and CompletedAt set), and the job it returns,
	// when not nil, commits with the outcome; its error fails the finish,
	// which then writes nothing.
	FinishGeneration(ctx context.Context, g *Generation, outbox func(g *Generation) (*queue.Job, error)) error
	// AbortGeneration moves an initializing or running generation to
	// aborted and cancels its queued or running jobs, in one transaction,
	// and returns it; a terminal generation is CONFLICT.
	AbortGeneration(ctx context.Context, workspaceID, id string) (*Generation, error)
	// GetExecution summarises the generations of an execution of the
	// workspace; an execution without generations is NOT_FOUND.
	GetExecution(ctx context.Context, workspaceID, executionID string) (*Execution, error)
}

// Execution summarises the generations started by one run request: a
// single test case run or a batch.
type Execution struct {
	ExecutionID     string          `json:"executionId"`
	WorkspaceID     string          `json:"-"`
	PromptID        string          `json:"promptId"`
	PromptVersionID string          `json:"promptVersionId"`
	Total           int             `json:"total"`
	Counts          ExecutionCounts `json:"counts"`
	// Passed and Failed count the graded generations (Generation.Passed
	// set) that passed and that did not.
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// PassRate is Passed / (Passed + Failed), nil while none is graded.
	PassRate  *float64  `json:"passRate"`
	CreatedAt time.Time `json:"createdAt"`
}

// ExecutionCounts counts an execution's generations by status.
type ExecutionCounts struct {
	Initializing int `json:"initializing"`
	Running      int `json:"running"`
	Completed    int `json:"completed"`
	Failed       int `json:"failed"`
	Aborted      int `json:"aborted"`
}

// Terminal reports whether every generation of the execution has finished.
func (e *Execution) Terminal() bool { return e.Counts.Initializing+e.Counts.Running == 0 }

// Terminal reports whether the generation has finished: completed, failed
// or aborted.
func (g *Generation) Terminal() bool {
	return g.Status == GenerationCompleted || g.Status == GenerationFailed || g.Status == GenerationAborted
}
