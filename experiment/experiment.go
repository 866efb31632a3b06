package experiment

import (
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Experiment statuses. Completed, failed and cancelled are terminal.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Statuses lists every status.
var Statuses = []string{StatusQueued, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled}

// Limits of an experiment's request.
const (
	MaxVersions    = 10
	MaxEvaluators  = 20
	MaxRepetitions = 10
	// MaxResults bounds test cases × versions × repetitions.
	MaxResults = 20000
)

// Experiment is a run of a canvas's test cases against versions. Versions
// are known once it starts (environments resolve then); Total is known
// from the start.
type Experiment struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"-"`
	PromptID    string `json:"promptId"`
	Status      string `json:"status"`
	// Request is what was asked for, evaluators resolved (a saved one
	// copied in) and secrets left out of what is shown.
	Request  Request   `json:"request"`
	Progress Progress  `json:"progress"`
	Versions []Version `json:"versions"`
	// TestCaseIDs are the test cases selected when the experiment was
	// started, in the order they run.
	TestCaseIDs []string   `json:"testCaseIds"`
	Error       *Error     `json:"error"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	StartedAt   *time.Time `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
	// Runner is the identity the cases run under: the principal that
	// started the experiment.
	Runner Runner `json:"-"`
}

// Terminal reports whether the experiment has ended.
func (e *Experiment) Terminal() bool {
	return e.Status == StatusCompleted || e.Status == StatusFailed || e.Status == StatusCancelled
}

// Request is the body of a start: a canvas, its versions or environments,
// the test cases (by id, by tag, or all), the evaluators and the
// repetitions.
type Request struct {
	PromptID     string      `json:"promptId"`
	VersionIDs   []string    `json:"versionIds,omitempty"`
	Environments []string    `json:"environments,omitempty"`
	TestCaseIDs  []string    `json:"testCaseIds,omitempty"`
	TagIDs       []string    `json:"tagIds,omitempty"`
	Evaluators   []Evaluator `json:"evaluators"`
	Repetitions  int         `json:"repetitions,omitempty"`
}

// Runner is the identity an experiment's cases run under.
type Runner struct {
	UserID   string   `json:"userId,omitempty"`
	KeyID    string   `json:"keyId,omitempty"`
	Projects []string `json:"projects"`
}

// Principal returns the principal of the runner in workspaceID, as an
// editor.
func (r Runner) Principal(workspaceID string) *canvas.Principal {
	return &canvas.Principal{WorkspaceID: workspaceID, UserID: r.UserID, KeyID: r.KeyID, Role: canvas.RoleEditor,
		Projects: r.Projects}
}

// Progress counts the results written and to write.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Version is a version an experiment runs: named by id, or the version an
// environment published when the experiment started. Totals are filled by
// Service.Get.
type Version struct {
	VersionID   string  `json:"versionId"`
	Environment string  `json:"environment,omitempty"`
	Totals      *Totals `json:"totals,omitempty"`
}

// Error says why an experiment failed, or why a run or an evaluator did.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorOf returns err as an Error, never leaking an internal cause.
func errorOf(err error) *Error {
	return &Error{Code: canvas.ErrorCode(err), Message: canvas.ErrorMessage(err)}
}

// Result is one test case run on one version at one repetition, and its
// scores. Passed is the verdict: the annotation's when a person annotated
// the result, else whether every evaluator that gave a verdict passed it;
// nil when there is none (the run failed, or every evaluator erred).
type Result struct {
	ID           string      `json:"id"`
	WorkspaceID  string      `json:"-"`
	ExperimentID string      `json:"experimentId"`
	TestCaseID   string      `json:"testCaseId"`
	VersionID    string      `json:"versionId"`
	Repetition   int         `json:"repetition"`
	RunID        *string     `json:"runId"`
	Output       *string     `json:"output"`
	LatencyMs    int64       `json:"latencyMs"`
	Usage        model.Usage `json:"usage"`
	Cost         *model.Cost `json:"cost"`
	Scores       []Score     `json:"scores"`
	Passed       *bool       `json:"passed"`
	// Verdict is the evaluators' verdict, before any annotation.
	Verdict    *bool       `json:"verdict"`
	Error      *Error      `json:"error"`
	Annotation *Annotation `json:"annotation"`
	CreatedAt  time.Time   `json:"createdAt"`
	UpdatedAt  time.Time   `json:"updatedAt"`
}

// key is the identity of a result within its experiment.
type key struct {
	testCaseID, versionID string
	repetition            int
}

func (r *Result) key() key { return key{r.TestCaseID, r.VersionID, r.Repetition} }

// settle sets Passed from the annotation, else the verdict.
func (r *Result) settle() {
	r.Passed = r.Verdict
	if r.Annotation != nil {
		p := r.Annotation.Passed
		r.Passed = &p
	}
}

// Score is one evaluator's judgement of a result: a score from 0 to 1,
// whether it passes and why, or the error that kept the evaluator from
// judging (which is not a failure of the case). Judge is set for an
// llm-judge: what the judge's own call cost, apart from the candidate's.
type Score struct {
	Evaluator string   `json:"evaluator"`
	Score     *float64 `json:"score"`
	Passed    *bool    `json:"passed"`
	Reason    string   `json:"reason"`
	Error     *Error   `json:"error,omitempty"`
	Judge     *Judge   `json:"judge,omitempty"`
}

// Judge is what an llm-judge's call took: the model that answered, its
// latency, usage and cost.
type Judge struct {
	Model     string      `json:"model"`
	LatencyMs int64       `json:"latencyMs"`
	Usage     model.Usage `json:"usage"`
	Cost      *model.Cost `json:"cost"`
}

// Annotation is a person's review of a result: it decides the result's
// verdict, and its score counts in the totals as the evaluator "human".
type Annotation struct {
	Passed    bool      `json:"passed"`
	Score     *float64  `json:"score,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	By        string    `json:"by"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// HumanEvaluator is the name the annotations' scores are totalled under.
const HumanEvaluator = "human"

// AnnotationParams are the body of an annotation.
type AnnotationParams struct {
	Passed  *bool    `json:"passed"`
	Score   *float64 `json:"score"`
	Comment string   `json:"comment"`
}

// Totals sum one version's results. Cases counts its results (each
// repetition counts); Passed and Failed those with a verdict, Errored those
// without (the run failed, or every evaluator erred); PassRate is Passed /
// (Passed + Failed), nil while none has a verdict. Scores is each
// evaluator's mean score over the results it scored. Cost and Tokens are
// the candidate runs'; JudgeCost the llm-judges'. The latencies are the
// nearest-rank percentiles of the runs' latencies.
type Totals struct {
	Cases        int                `json:"cases"`
	Passed       int                `json:"passed"`
	Failed       int                `json:"failed"`
	Errored      int                `json:"errored"`
	PassRate     *float64           `json:"passRate"`
	Scores       map[string]float64 `json:"scores"`
	Cost         *model.Cost        `json:"cost"`
	JudgeCost    *model.Cost        `json:"judgeCost"`
	Tokens       int                `json:"tokens"`
	LatencyP50Ms int64              `json:"latencyP50Ms"`
	LatencyP95Ms int64              `json:"latencyP95Ms"`
}

// Comparison pairs a baseline version's results with a candidate's, case
// by case and repetition by repetition. Regressions counts the pairs whose
// baseline passed and whose candidate did not; Improvements the reverse;
// Unchanged the other complete pairs. A pair missing a side (an experiment
// that did not finish) is listed and not counted.
type Comparison struct {
	Baseline     string `json:"baseline"`
	Candidate    string `json:"candidate"`
	Regressions  int    `json:"regressions"`
	Improvements int    `json:"improvements"`
	Unchanged    int    `json:"unchanged"`
	Cases        []Pair `json:"cases"`
}

// Pair changes.
const (
	ChangeRegression  = "regression"
	ChangeImprovement = "improvement"
	ChangeUnchanged   = "unchanged"
)

// Pair is one test case at one repetition on both versions.
type Pair struct {
	TestCaseID string  `json:"testCaseId"`
	Repetition int     `json:"repetition"`
	Change     string  `json:"change,omitempty"`
	Baseline   *Result `json:"baseline"`
	Candidate  *Result `json:"candidate"`
}

// passedOf reports whether a result has the verdict passed.
func passedOf(r *Result) bool { return r != nil && r.Passed != nil && *r.Passed }

// change says how a pair changed, "" when a side is missing.
func change(base, cand *Result) string {
	switch {
	case base == nil || cand == nil:
		return ""
	case passedOf(base) && !passedOf(cand):
		return ChangeRegression
	case !passedOf(base) && passedOf(cand):
		return ChangeImprovement
	}
	return ChangeUnchanged
}
