package testcase

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/model"
)

// Grade says whether output passes tc, or nil when tc is not graded (see
// Graded). It is tc's evaluator's Judge of output against tc's
// expectedOutput, reduced to its pass.
func (tc *TestCase) Grade(output string) *bool {
	if !tc.Graded() {
		return nil
	}
	ev := Evaluator{Type: tc.EvaluatorType()}
	if tc.Evaluator != nil {
		ev = *tc.Evaluator
		ev.Type = tc.EvaluatorType()
	}
	v, err := ev.Judge(output, tc.ExpectedOutput)
	ok := err == nil && v.Passed
	return &ok
}

// Verdict is a rule evaluator's judgement of an output: a score from 0 to
// 1, whether it passes, and why it does not when it does not.
type Verdict struct {
	Score  float64
	Passed bool
	Reason string
}

// DefaultSimilarityThreshold is the pass threshold of a similarity
// evaluator that sets none.
const DefaultSimilarityThreshold = 0.8

// maxEditRunes bounds the outputs whose similarity is an edit distance:
// beyond it (in runes, either side) the quadratic distance would cost too
// much, and the token similarity is used.
const maxEditRunes = 2000

// Judge judges output with the rule evaluator e, against expected where
// the type compares with an expected output:
//
//   - exact (the default): the output equals expected once leading and
//     trailing white space is trimmed from both, since models often end
//     their answer with a newline; inner white space and case count.
//   - contains: the output contains expected, case-sensitively.
//   - regex: the output matches Pattern, Go RE2 syntax, unanchored unless
//     the pattern anchors itself; expected is not used.
//   - json-schema: the output is one JSON value valid against Schema;
//     expected is not used.
//   - json-equal: the output and expected are the same JSON value: key
//     order and white space do not count, numbers compare by value.
//   - similarity: the score is how alike the output and expected are, from
//     0 to 1 (Similarity), and it passes at Threshold
//     (DefaultSimilarityThreshold when nil).
//
// The score of a pass/fail type is 1 or 0. An evaluator that needs
// expected and is given nil is an error, not a failure, as is an unknown
// type; a pattern or schema that does not compile (refused when an
// evaluator is saved) fails the output.
func (e Evaluator) Judge(output string, expected *string) (Verdict, error) {
	typ := e.Type
	if typ == "" {
		typ = EvaluatorExact
	}
	switch typ {
	case EvaluatorRegex:
		re, err := regexp.Compile(e.Pattern)
		if err != nil {
			return fail("The pattern does not compile."), nil
		}
		return pass(re.MatchString(output), "The output does not match the pattern."), nil
	case EvaluatorJSONSchema:
		if err := model.ValidateOutput(e.Schema, output); err != nil {
			return fail("The output does not match the schema: " + err.Error()), nil
		}
		return pass(true, ""), nil
	}
	if expected == nil {
		if typ != EvaluatorExact && typ != EvaluatorContains && typ != EvaluatorJSONEqual && typ != EvaluatorSimilarity {
			return Verdict{}, fmt.Errorf("unknown evaluator type %q", typ)
		}
		return Verdict{}, fmt.Errorf("the %s evaluator needs an expected output, and the test case has none", typ)
	}
	switch typ {
	case EvaluatorExact:
		return pass(strings.TrimSpace(output) == strings.TrimSpace(*expected), "The output is not the expected output."), nil
	case EvaluatorContains:
		return pass(strings.Contains(output, *expected), "The output does not contain the expected output."), nil
	case EvaluatorJSONEqual:
		var got, want any
		if err := json.Unmarshal([]byte(output), &got); err != nil {
			return fail("The output is not JSON."), nil
		}
		if err := json.Unmarshal([]byte(*expected), &want); err != nil {
			return Verdict{}, fmt.Errorf("the expected output is not JSON")
		}
		return pass(reflect.DeepEqual(got, want), "The output is not the same JSON value as the expected output."), nil
	case EvaluatorSimilarity:
		threshold := DefaultSimilarityThreshold
		if e.Threshold != nil {
			threshold = *e.Threshold
		}
		s := Similarity(output, *expected)
		v := Verdict{Score: s, Passed: s >= threshold}
		if !v.Passed {
			v.Reason = fmt.Sprintf("The similarity %.3f is under the threshold %.3f.", s, threshold)
		}
		return v, nil
	}
	return Verdict{}, fmt.Errorf("unknown evaluator type %q", typ)
}

func pass(ok bool, reason string) Verdict {
	if ok {
		return Verdict{Score: 1, Passed: true}
	}
	return fail(reason)
}

func fail(reason string) Verdict { return Verdict{Score: 0, Reason: reason} }

// Similarity returns how alike a and b are, from 0 (nothing in common) to
// 1 (the same once leading and trailing white space is trimmed): one less
// the Levenshtein distance of their runes divided by the longer's length,
// or, when either is longer than 2,000 runes, the Dice coefficient of
// their multisets of words, which costs linear time.
func Similarity(a, b string) float64 {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == b {
		return 1
	}
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if na > maxEditRunes || nb > maxEditRunes {
		return tokenSimilarity(a, b)
	}
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(rb)])/float64(max(len(ra), len(rb)))
}

// tokenSimilarity is the Dice coefficient of the multisets of words of a
// and b.
func tokenSimilarity(a, b string) float64 {
	wa, wb := strings.FieldsFunc(a, unicode.IsSpace), strings.FieldsFunc(b, unicode.IsSpace)
	if len(wa)+len(wb) == 0 {
		return 1
	}
	count := make(map[string]int, len(wa))
	for _, w := range wa {
		count[w]++
	}
	common := 0
	for _, w := range wb {
		if count[w] > 0 {
			count[w]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(wa)+len(wb))
}
