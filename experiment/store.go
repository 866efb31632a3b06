package experiment

import (
	"context"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Store is the persistence of experiments, their results and saved
// evaluators. Implementations set ids (when empty) and timestamps from one
// clock reading per transaction and scope every read and write to a
// workspace: a row of another workspace is NOT_FOUND.
type Store interface {
	// CreateExperiment inserts e, queued, and job, whose RefID is set to
	// e's id, in one transaction.
	CreateExperiment(ctx context.Context, e *Experiment, job *queue.Job) error
	// GetExperiment returns an experiment with its Progress.Done counted.
	GetExperiment(ctx context.Context, workspaceID, id string) (*Experiment, error)
	// ListExperiments returns one page of a canvas's experiments, newest
	// first, and how many it has.
	ListExperiments(ctx context.Context, q ListQuery) ([]*Experiment, int, error)
	// StartExperiment moves a queued experiment to running with the
	// versions it runs, and returns it; a running one is returned as it is
	// (its versions kept), and a terminal one is CONFLICT.
	StartExperiment(ctx context.Context, workspaceID, id string, versions []Version) (*Experiment, error)
	// FinishExperiment moves a queued or running experiment to p.Status
	// (completed or failed) with p.Error; a terminal one is CONFLICT and
	// nothing is written. When outbox is not nil it is called in the same
	// transaction with the experiment as written, and the job it returns,
	// when not nil, commits with it.
	FinishExperiment(ctx context.Context, p FinishParams, outbox func(*Experiment) (*queue.Job, error)) (*Experiment, error)
	// CancelExperiment moves a queued or running experiment to cancelled
	// and cancels its jobs, in one transaction, and returns it; a terminal
	// one is CONFLICT. When outbox is not nil it is called as
	// FinishExperiment calls it.
	CancelExperiment(ctx context.Context, workspaceID, id string, outbox func(*Experiment) (*queue.Job, error)) (*Experiment, error)

	// CreateResult inserts r when its experiment is running and has no
	// result of r's test case, version and repetition: written reports
	// whether it did. An experiment that is not running is CONFLICT.
	CreateResult(ctx context.Context, r *Result) (written bool, err error)
	// ListResults returns the results of an experiment that q selects,
	// ordered by test case order of insertion (created_at, then id), and
	// how many it selects.
	ListResults(ctx context.Context, q ResultQuery) ([]*Result, int, error)
	// AnnotateResult sets the annotation of a result of an experiment and
	// returns the result.
	AnnotateResult(ctx context.Context, p AnnotateParams) (*Result, error)

	// CreateEvaluator inserts a saved evaluator; a name its canvas has
	// already given another is CONFLICT.
	CreateEvaluator(ctx context.Context, e *SavedEvaluator) error
	// GetEvaluator returns a saved evaluator.
	GetEvaluator(ctx context.Context, workspaceID, id string) (*SavedEvaluator, error)
	// ListEvaluators returns one page of a canvas's saved evaluators, by
	// name, and how many it has.
	ListEvaluators(ctx context.Context, workspaceID string, q EvaluatorQuery) ([]*SavedEvaluator, int, error)

	// SealedEvaluators returns, across every workspace, at most limit
	// saved evaluators whose secrets key (SecretsKey) is neither nil nor
	// keyID, with ids after afterID, by id: the work of a key rotation.
	SealedEvaluators(ctx context.Context, keyID, afterID string, limit int) ([]*SavedEvaluator, error)
	// ResealEvaluator replaces a saved evaluator's spec by e's, unless its
	// secrets key is no longer oldKeyID (then it does nothing and reports
	// false).
	ResealEvaluator(ctx context.Context, e *SavedEvaluator, oldKeyID string) (bool, error)
	// SealedExperiments is SealedEvaluators for experiments.
	SealedExperiments(ctx context.Context, keyID, afterID string, limit int) ([]*Experiment, error)
	// ResealExperiment replaces an experiment's request by e's, unless
	// its secrets key is no longer oldKeyID (then it does nothing and
	// reports false).
	ResealExperiment(ctx context.Context, e *Experiment, oldKeyID string) (bool, error)
}

// ListQuery selects one page of a canvas's experiments.
type ListQuery struct {
	WorkspaceID   string
	PromptID      string
	Limit, Offset int
}

// FinishParams end an experiment.
type FinishParams struct {
	WorkspaceID string
	ID          string
	Status      string
	Error       *Error
}

// ResultQuery selects results of an experiment. VersionIDs and TestCaseID
// narrow them; Limit 0 selects them all. WithoutOutput leaves Output nil,
// for totals, which do not read it.
type ResultQuery struct {
	WorkspaceID   string
	ExperimentID  string
	VersionIDs    []string
	TestCaseID    string
	Limit, Offset int
	WithoutOutput bool
}

// AnnotateParams name a result of an experiment and its annotation.
type AnnotateParams struct {
	WorkspaceID  string
	ExperimentID string
	ResultID     string
	Annotation   Annotation
}
