package testcase

import (
	"regexp"
	"strings"

	"github.com/promptcanvas/promptcanvas/model"
)

// Grade says whether output passes tc, or nil when tc is not graded (see
// Graded). Evaluators:
//
//   - exact (the default): the output equals expectedOutput once leading and
//     trailing white space is trimmed from both, since models often end
//     their answer with a newline; inner white space and case count.
//   - contains: the output contains expectedOutput, case-sensitively.
//   - regex: the output matches Pattern, Go RE2 syntax, unanchored unless
//     the pattern anchors itself; expectedOutput is not used.
//   - json-schema: the output is one JSON value valid against Schema;
//     expectedOutput is not used.
//
// A pattern or schema that does not compile (the service refuses both when
// a test case is saved) fails the grade instead of erroring.
func (tc *TestCase) Grade(output string) *bool {
	if !tc.Graded() {
		return nil
	}
	var ok bool
	switch tc.EvaluatorType() {
	case EvaluatorContains:
		ok = strings.Contains(output, *tc.ExpectedOutput)
	case EvaluatorRegex:
		re, err := regexp.Compile(tc.Evaluator.Pattern)
		ok = err == nil && re.MatchString(output)
	case EvaluatorJSONSchema:
		ok = model.ValidateOutput(tc.Evaluator.Schema, output) == nil
	default:
		ok = strings.TrimSpace(output) == strings.TrimSpace(*tc.ExpectedOutput)
	}
	return &ok
}
