package experiment

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Evaluator types beyond the rules of package testcase (exact, contains,
// regex, json-schema, json-equal, similarity).
const (
	// TypeJudge asks a model to score the output against a rubric, with
	// structured output {score, reason}.
	TypeJudge = "llm-judge"
	// TypeWebhook POSTs {testCase, output, expectedOutput}, signed per
	// Standard Webhooks, to a team's endpoint, which answers {score,
	// passed, reason}.
	TypeWebhook = "webhook"
)

// Types lists every evaluator type.
var Types = append(slices.Clone(testcase.EvaluatorTypes), TypeJudge, TypeWebhook)

// Limits and defaults of evaluators.
const (
	MaxNameLength           = 100
	MaxRubricLength         = 20000
	DefaultPassThreshold    = 0.5
	DefaultWebhookTimeoutMs = 10000
	MaxWebhookTimeoutMs     = 60000
)

// Evaluator scores a result. Name identifies its scores in results and
// totals (unique within an experiment). The fields each type reads:
// Pattern (regex), Schema (json-schema), Threshold (similarity), Rubric,
// Model, CredentialID and PassThreshold (llm-judge), URL, Secret and
// TimeoutMs (webhook). ID names a saved evaluator: in a request, an
// evaluator given by its ID alone is the saved one.
type Evaluator struct {
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
	// Secret signs a webhook evaluator's requests ("whsec_" and base64);
	// it is never shown once saved, and never stored: what is stored is
	// Sealed.
	Secret    string `json:"secret,omitempty"`
	TimeoutMs int    `json:"timeoutMs,omitempty"`
	// Sealed is the secret as it is stored, sealed by the service; a row
	// written before secrets were sealed has Secret instead.
	Sealed *SealedSecret `json:"sealed,omitempty"`
}

// rule returns the rule evaluator of package testcase e stands for.
func (e *Evaluator) rule() testcase.Evaluator {
	return testcase.Evaluator{Type: e.Type, Pattern: e.Pattern, Schema: e.Schema, Threshold: e.Threshold}
}

// passThreshold returns the llm-judge's pass mark.
func (e *Evaluator) passThreshold() float64 {
	if e.PassThreshold == nil {
		return DefaultPassThreshold
	}
	return *e.PassThreshold
}

// timeout returns the webhook's timeout.
func (e *Evaluator) timeout() time.Duration {
	if e.TimeoutMs <= 0 {
		return DefaultWebhookTimeoutMs * time.Millisecond
	}
	return time.Duration(e.TimeoutMs) * time.Millisecond
}

// shown returns e without its secret, clear or sealed.
func (e Evaluator) shown() Evaluator {
	e.Secret, e.Sealed = "", nil
	return e
}

// SavedEvaluator is an evaluator a canvas keeps for its experiments.
type SavedEvaluator struct {
	Evaluator
	WorkspaceID string    `json:"-"`
	PromptID    string    `json:"promptId"`
	CreatedBy   string    `json:"createdBy"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// CreateEvaluatorParams are the body of POST /evaluators: a canvas and an
// evaluator. A webhook evaluator without a secret gets a new one, shown
// once in the answer.
type CreateEvaluatorParams struct {
	PromptID string `json:"promptId"`
	Evaluator
}

// EvaluatorQuery selects a canvas's saved evaluators, one page.
type EvaluatorQuery struct {
	PromptID      string
	Limit, Offset int
}

// validator collects the problems of a request, each with its JSON
// pointer.
type validator struct{ details []canvas.Detail }

func (v *validator) add(path, format string, args ...any) {
	v.details = append(v.details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	return canvas.Invalid("Request failed validation.", v.details...)
}

// evaluator checks e at path: a name, a known type, the fields the type
// needs (each valid) and none it does not read. A secret is required of a
// webhook unless needSecret is false (a saved one gets a new secret).
func (v *validator) evaluator(path string, e *Evaluator, needSecret bool) {
	switch n := utf8.RuneCountInString(e.Name); {
	case strings.TrimSpace(e.Name) == "":
		v.add(path+"/name", "is required")
	case n > MaxNameLength:
		v.add(path+"/name", "must be at most %d characters", MaxNameLength)
	}
	if !slices.Contains(Types, e.Type) {
		v.add(path+"/type", "must be one of %s", quoted(Types))
		return
	}
	hasSchema := len(bytes.TrimSpace(e.Schema)) > 0 && string(bytes.TrimSpace(e.Schema)) != "null"
	only := func(field string, set bool, types ...string) {
		if set && !slices.Contains(types, e.Type) {
			v.add(path+"/"+field, "is only read by the %s evaluator", quoted(types))
		}
	}
	only("pattern", e.Pattern != "", testcase.EvaluatorRegex)
	only("schema", hasSchema, testcase.EvaluatorJSONSchema)
	only("threshold", e.Threshold != nil, testcase.EvaluatorSimilarity)
	only("rubric", e.Rubric != "", TypeJudge)
	only("model", e.Model != "", TypeJudge)
	only("credentialId", e.CredentialID != "", TypeJudge)
	only("passThreshold", e.PassThreshold != nil, TypeJudge)
	only("url", e.URL != "", TypeWebhook)
	only("secret", e.Secret != "", TypeWebhook)
	only("timeoutMs", e.TimeoutMs != 0, TypeWebhook)
	if e.Sealed != nil {
		v.add(path+"/sealed", "is set by the server")
	}
	unit := func(field string, f *float64) {
		if f != nil && (*f < 0 || *f > 1) {
			v.add(path+"/"+field, "must be between 0 and 1")
		}
	}
	switch e.Type {
	case testcase.EvaluatorRegex:
		if e.Pattern == "" {
			v.add(path+"/pattern", "is required by the regex evaluator")
		} else if utf8.RuneCountInString(e.Pattern) > testcase.MaxPatternLength {
			v.add(path+"/pattern", "must be at most %d characters", testcase.MaxPatternLength)
		} else if _, err := regexp.Compile(e.Pattern); err != nil {
			v.add(path+"/pattern", "is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	case testcase.EvaluatorJSONSchema:
		if !hasSchema {
			v.add(path+"/schema", "is required by the json-schema evaluator")
		} else if _, err := canvas.CompileSchema(path+"/schema", e.Schema); err != nil {
			v.details = append(v.details, canvas.ErrorDetails(err)...)
		}
	case testcase.EvaluatorSimilarity:
		unit("threshold", e.Threshold)
	case TypeJudge:
		switch n := utf8.RuneCountInString(e.Rubric); {
		case strings.TrimSpace(e.Rubric) == "":
			v.add(path+"/rubric", "is required by the llm-judge evaluator")
		case n > MaxRubricLength:
			v.add(path+"/rubric", "must be at most %d characters", MaxRubricLength)
		}
		if strings.TrimSpace(e.Model) == "" {
			v.add(path+"/model", "is required by the llm-judge evaluator")
		}
		if e.CredentialID != "" && !validUUID(e.CredentialID) {
			v.add(path+"/credentialId", "must be a UUID")
		}
		unit("passThreshold", e.PassThreshold)
	case TypeWebhook:
		if e.URL == "" {
			v.add(path+"/url", "is required by the webhook evaluator")
		} else if err := webhook.CheckURL(e.URL); err != nil {
			v.add(path+"/url", "must be an absolute http or https URL")
		}
		if e.Secret == "" && needSecret {
			v.add(path+"/secret", "is required by a webhook evaluator given in the request (or save it: POST /evaluators)")
		} else if e.Secret != "" {
			if _, err := webhook.Sign(e.Secret, "id", "0", nil); err != nil {
				v.add(path+"/secret", "must be whsec_ followed by base64")
			}
		}
		if e.TimeoutMs < 0 || e.TimeoutMs > MaxWebhookTimeoutMs {
			v.add(path+"/timeoutMs", "must be between 1 and %d", MaxWebhookTimeoutMs)
		}
	}
}

// newSecret returns a new signing secret: "whsec_" and the base64 of 32
// random bytes.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

func validUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

func quoted(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return strings.Join(q, ", ")
}
