package wire

import (
	"encoding/json"
	"time"
)

// Experiment statuses; completed, failed and cancelled are terminal.
const (
	ExperimentQueued    = "queued"
	ExperimentRunning   = "running"
	ExperimentCompleted = "completed"
	ExperimentFailed    = "failed"
	ExperimentCancelled = "cancelled"
)

// Changes of a compared pair.
const (
	ChangeRegression  = "regression"
	ChangeImprovement = "improvement"
	ChangeUnchanged   = "unchanged"
)

// ExperimentRequest is the body of POST /experiments: a canvas, its
// versions (VersionIDs) or environments, the test cases (by id, by tag, or
// all), the evaluators and the repetitions.
type ExperimentRequest struct {
	PromptID     string                `json:"promptId"`
	VersionIDs   []string              `json:"versionIds,omitempty"`
	Environments []string              `json:"environments,omitempty"`
	TestCaseIDs  []string              `json:"testCaseIds,omitempty"`
	TagIDs       []string              `json:"tagIds,omitempty"`
	Evaluators   []ExperimentEvaluator `json:"evaluators"`
	Repetitions  int                   `json:"repetitions,omitempty"`
}

// ExperimentEvaluator is an evaluator given whole, or a saved one by its
// ID alone. Secret is sent, never answered.
type ExperimentEvaluator struct {
	ID            string          `json:"id,omitempty"`
	Name          string          `json:"name,omitempty"`
	Type          string          `json:"type,omitempty"`
	Pattern       string          `json:"pattern,omitempty"`
	Schema        json.RawMessage `json:"schema,omitempty"`
	Threshold     *float64        `json:"threshold,omitempty"`
	Rubric        string          `json:"rubric,omitempty"`
	Model         string          `json:"model,omitempty"`
	CredentialID  string          `json:"credentialId,omitempty"`
	PassThreshold *float64        `json:"passThreshold,omitempty"`
	URL           string          `json:"url,omitempty"`
	Secret        string          `json:"secret,omitempty"`
	TimeoutMs     int             `json:"timeoutMs,omitempty"`
}

// Experiment is an experiment: its progress and, when read by id, each
// version's totals.
type Experiment struct {
	ID          string              `json:"id"`
	PromptID    string              `json:"promptId"`
	Status      string              `json:"status"`
	Request     ExperimentRequest   `json:"request"`
	Progress    ExperimentProgress  `json:"progress"`
	Versions    []ExperimentVersion `json:"versions"`
	TestCaseIDs []string            `json:"testCaseIds"`
	Error       *ExperimentError    `json:"error"`
	CreatedBy   string              `json:"createdBy"`
	CreatedAt   time.Time           `json:"createdAt"`
	UpdatedAt   time.Time           `json:"updatedAt"`
	StartedAt   *time.Time          `json:"startedAt"`
	CompletedAt *time.Time          `json:"completedAt"`
}

// Terminal reports whether the experiment has ended.
func (e *Experiment) Terminal() bool {
	return e.Status == ExperimentCompleted || e.Status == ExperimentFailed || e.Status == ExperimentCancelled
}

// Version returns the experiment's version that name names (a version id
// or the environment it was resolved from), nil for none.
func (e *Experiment) Version(name string) *ExperimentVersion {
	for i, v := range e.Versions {
		if v.VersionID == name || v.Environment != "" && v.Environment == name {
			return &e.Versions[i]
		}
	}
	return nil
}

// ExperimentProgress counts the results written and to write.
type ExperimentProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// ExperimentVersion is a version an experiment runs, with its totals.
type ExperimentVersion struct {
	VersionID   string            `json:"versionId"`
	Environment string            `json:"environment,omitempty"`
	Totals      *ExperimentTotals `json:"totals,omitempty"`
}

// ExperimentTotals sum one version's results.
type ExperimentTotals struct {
	Cases        int                `json:"cases"`
	Passed       int                `json:"passed"`
	Failed       int                `json:"failed"`
	Errored      int                `json:"errored"`
	PassRate     *float64           `json:"passRate"`
	Scores       map[string]float64 `json:"scores"`
	Cost         *Cost              `json:"cost"`
	JudgeCost    *Cost              `json:"judgeCost"`
	Tokens       int                `json:"tokens"`
	LatencyP50Ms int64              `json:"latencyP50Ms"`
	LatencyP95Ms int64              `json:"latencyP95Ms"`
}

// ExperimentError says why an experiment, a run or an evaluator failed.
type ExperimentError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ExperimentResult is a test case run on a version at one repetition.
type ExperimentResult struct {
	ID           string            `json:"id"`
	ExperimentID string            `json:"experimentId"`
	TestCaseID   string            `json:"testCaseId"`
	VersionID    string            `json:"versionId"`
	Repetition   int               `json:"repetition"`
	RunID        *string           `json:"runId"`
	Output       *string           `json:"output"`
	LatencyMs    int64             `json:"latencyMs"`
	Usage        Usage             `json:"usage"`
	Cost         *Cost             `json:"cost"`
	Scores       []ExperimentScore `json:"scores"`
	Passed       *bool             `json:"passed"`
	Verdict      *bool             `json:"verdict"`
	Error        *ExperimentError  `json:"error"`
	Annotation   *Annotation       `json:"annotation"`
	CreatedAt    time.Time         `json:"createdAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
}

// ExperimentScore is one evaluator's judgement of a result.
type ExperimentScore struct {
	Evaluator string           `json:"evaluator"`
	Score     *float64         `json:"score"`
	Passed    *bool            `json:"passed"`
	Reason    string           `json:"reason"`
	Error     *ExperimentError `json:"error,omitempty"`
	Judge     *JudgeCall       `json:"judge,omitempty"`
}

// JudgeCall is an llm-judge's own call.
type JudgeCall struct {
	Model     string `json:"model"`
	LatencyMs int64  `json:"latencyMs"`
	Usage     Usage  `json:"usage"`
	Cost      *Cost  `json:"cost"`
}

// Annotation is a person's review of a result.
type Annotation struct {
	Passed    bool      `json:"passed"`
	Score     *float64  `json:"score,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	By        string    `json:"by"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AnnotationRequest is the body of an annotation.
type AnnotationRequest struct {
	Passed  *bool    `json:"passed"`
	Score   *float64 `json:"score,omitempty"`
	Comment string   `json:"comment,omitempty"`
}

// Comparison pairs a baseline version's results with a candidate's.
type Comparison struct {
	Baseline     string           `json:"baseline"`
	Candidate    string           `json:"candidate"`
	Regressions  int              `json:"regressions"`
	Improvements int              `json:"improvements"`
	Unchanged    int              `json:"unchanged"`
	Cases        []ComparisonPair `json:"cases"`
}

// ComparisonPair is one test case at one repetition on both versions.
type ComparisonPair struct {
	TestCaseID string            `json:"testCaseId"`
	Repetition int               `json:"repetition"`
	Change     string            `json:"change,omitempty"`
	Baseline   *ExperimentResult `json:"baseline"`
	Candidate  *ExperimentResult `json:"candidate"`
}
