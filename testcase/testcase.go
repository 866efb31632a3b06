package testcase

import (
	"encoding/json"
	"time"
)

// Evaluator types: how a completed generation's output is graded.
const (
	// EvaluatorExact passes when the output equals expectedOutput. It is
	// the default when a test case names no evaluator.
	EvaluatorExact = "exact"
	// EvaluatorContains passes when the output contains expectedOutput.
	EvaluatorContains = "contains"
	// EvaluatorRegex passes when the output matches Pattern (Go RE2
	// syntax, unanchored unless the pattern anchors itself).
	EvaluatorRegex = "regex"
	// EvaluatorJSONSchema passes when the output is JSON valid against
	// Schema (compiled with canvas.CompileSchema).
	EvaluatorJSONSchema = "json-schema"
	// EvaluatorJSONEqual passes when the output and expectedOutput are the
	// same JSON value, whatever their key order and white space.
	EvaluatorJSONEqual = "json-equal"
	// EvaluatorSimilarity scores how alike the output and expectedOutput
	// are (Similarity) and passes at Threshold.
	EvaluatorSimilarity = "similarity"
)

// EvaluatorTypes lists every evaluator type.
var EvaluatorTypes = []string{EvaluatorExact, EvaluatorContains, EvaluatorRegex, EvaluatorJSONSchema,
	EvaluatorJSONEqual, EvaluatorSimilarity}

// Limits of test case and tag fields, in characters, and of the id lists
// of one bulk tagging call.
const (
	MaxTitleLength    = 256
	MaxTagNameLength  = 256
	MaxTagColorLength = 50
	MaxPatternLength  = 10000 // a regex evaluator's pattern
	MaxBulkIDs        = 1000
)

// TestCase is a set of inputs for a canvas, with the output it should give.
// It belongs to one canvas (PromptID) and is soft-deleted: a deleted test
// case vanishes from lists and reads as NOT_FOUND.
//
// The nullable fields are nil when the test case has no value for them, and
// are written as JSON null.
type TestCase struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"-"`
	PromptID    string `json:"promptId"`
	Title       string `json:"title"`
	// Messages are appended to the version's messages when the test case
	// runs.
	Messages []Message `json:"messages"`
	// Variables are the values of the version's {{variable}} placeholders.
	Variables            map[string]any `json:"variables"`
	VariablesRichContent map[string]any `json:"variablesRichContent"`
	Files                []File         `json:"files"`
	ExpectedOutput       *string        `json:"expectedOutput"`
	// Evaluator says how a generation is graded; nil grades with
	// EvaluatorExact.
	Evaluator           *Evaluator           `json:"evaluator"`
	Answers             map[string]AnswerSet `json:"answers"`
	PromptApplicationID *string              `json:"promptApplicationId"`
	Metadata            *Metadata            `json:"metadata"`
	CreatedBy           string               `json:"createdBy"`
	UpdatedBy           string               `json:"updatedBy"`
	CreatedAt           time.Time            `json:"createdAt"`
	UpdatedAt           time.Time            `json:"updatedAt"`
	DeletedAt           *time.Time           `json:"deletedAt"`
	// Tags are the live tags assigned to the test case, ordered by name
	// (then id); never nil on a test case a Store returns.
	Tags []*Tag `json:"tags"`
	// Generations are present only when a list asks for them
	// (ListParams.IncludeGenerations), newest first; then never nil.
	Generations []*Generation `json:"generations,omitzero"`
}

// Message is one message of a test case, appended after the version's own
// messages when the test case runs.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// File is a file given to a test case's run. VaultURL is a vault://<id>
// address of the workspace, URL a public address; VariableName names the
// variable the file fills.
type File struct {
	Index        int    `json:"index"`
	Name         string `json:"name"`
	MimeType     string `json:"mimeType"`
	VaultURL     string `json:"vaultUrl"`
	VariableName string `json:"variableName"`
	URL          string `json:"url"`
}

// AnswerSet is one entry of a test case's evaluation answers: examples of
// good and bad answers and the evaluations made of them. Items are kept as
// the client sent them; a missing array reads as empty.
type AnswerSet struct {
	Good  []json.RawMessage `json:"good"`
	Bad   []json.RawMessage `json:"bad"`
	Evals []json.RawMessage `json:"evals"`
}

// Metadata says where a test case came from.
type Metadata struct {
	// Source is free text, for example "manual", "import" or "production".
	Source string `json:"source"`
}

// Evaluator grades a completed generation's output (Judge). Type is one of
// EvaluatorTypes. Exact, contains and json-equal compare the output with the
// test case's expectedOutput and take no other field; similarity compares
// it too and reads Threshold (0 to 1; DefaultSimilarityThreshold when nil);
// regex needs Pattern and json-schema needs Schema, and neither needs an
// expectedOutput.
//
// A generation is graded (Passed set) when it completed and either the test
// case has an expectedOutput or its evaluator is regex or json-schema.
type Evaluator struct {
	Type    string          `json:"type"`
	Pattern string          `json:"pattern,omitempty"`
	Schema  json.RawMessage `json:"schema,omitempty"`
	// Threshold is the similarity evaluator's pass mark.
	Threshold *float64 `json:"threshold,omitempty"`
}

// Graded reports whether generations of tc get a Passed value.
func (tc *TestCase) Graded() bool {
	if tc.Evaluator != nil && (tc.Evaluator.Type == EvaluatorRegex || tc.Evaluator.Type == EvaluatorJSONSchema) {
		return true
	}
	return tc.ExpectedOutput != nil
}

// EvaluatorType returns the type of tc's evaluator, EvaluatorExact when it
// has none.
func (tc *TestCase) EvaluatorType() string {
	if tc.Evaluator == nil || tc.Evaluator.Type == "" {
		return EvaluatorExact
	}
	return tc.Evaluator.Type
}
