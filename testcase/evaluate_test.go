package testcase_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/testcase"
)

// expect and verdict return pointers for the table below.
func expect(s string) *string { return &s }
func verdict(b bool) *bool    { return &b }
func ptr(f float64) *float64  { return &f }

func TestTestCase_Grade(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["answer"],"properties":{"answer":{"type":"string"}}}`)
	for name, c := range map[string]struct {
		expected *string
		eval     *testcase.Evaluator
		output   string
		want     *bool
	}{
		"UngradedWithoutExpected":    {nil, nil, "anything", nil},
		"UngradedContainsNoExpect":   {nil, &testcase.Evaluator{Type: testcase.EvaluatorContains}, "x", nil},
		"ExactPass":                  {expect("Paris"), nil, "Paris", verdict(true)},
		"ExactTrimsSurroundingSpace": {expect(" Paris\n"), nil, "\tParis\n", verdict(true)},
		"ExactKeepsCase":             {expect("Paris"), nil, "paris", verdict(false)},
		"ExactKeepsInnerSpace":       {expect("New York"), nil, "New  York", verdict(false)},
		"ExactNamed":                 {expect("a"), &testcase.Evaluator{Type: testcase.EvaluatorExact}, "a", verdict(true)},
		"ContainsPass":               {expect("Paris"), &testcase.Evaluator{Type: testcase.EvaluatorContains}, "It is Paris.", verdict(true)},
		"ContainsFail":               {expect("Lyon"), &testcase.Evaluator{Type: testcase.EvaluatorContains}, "It is Paris.", verdict(false)},
		"RegexPass":                  {nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `\d{3}`}, "code 123", verdict(true)},
		"RegexUnanchored":            {nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `^\d+$`}, "code 123", verdict(false)},
		"RegexInvalidFails":          {nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `(`}, "(", verdict(false)},
		"SchemaPass":                 {nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema}, `{"answer":"x"}`, verdict(true)},
		"SchemaMismatch":             {nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema}, `{"answer":1}`, verdict(false)},
		"SchemaNotJSON":              {nil, &testcase.Evaluator{Type: testcase.EvaluatorJSONSchema, Schema: schema}, `answer: x`, verdict(false)},
		"JSONEqualIgnoresOrder":      {expect(`{"a": 1, "b": [1, 2]}`), &testcase.Evaluator{Type: testcase.EvaluatorJSONEqual}, "{\"b\":[1,2],\n \"a\":1.0}", verdict(true)},
		"JSONEqualKeepsArrayOrder":   {expect(`[1, 2]`), &testcase.Evaluator{Type: testcase.EvaluatorJSONEqual}, `[2, 1]`, verdict(false)},
		"JSONEqualNotJSON":           {expect(`{}`), &testcase.Evaluator{Type: testcase.EvaluatorJSONEqual}, `{`, verdict(false)},
		"SimilarityPass":             {expect("kitten"), &testcase.Evaluator{Type: testcase.EvaluatorSimilarity, Threshold: ptr(0.5)}, "sitting", verdict(true)},
		"SimilarityDefaultThreshold": {expect("kitten"), &testcase.Evaluator{Type: testcase.EvaluatorSimilarity}, "sitting", verdict(false)},
	} {
		t.Run(name, func(t *testing.T) {
			tc := &testcase.TestCase{ExpectedOutput: c.expected, Evaluator: c.eval}
			assert.Equal(t, c.want, tc.Grade(c.output))
		})
	}
}

func ExampleTestCase_Grade() {
	tc := &testcase.TestCase{ExpectedOutput: expect("Paris"), Evaluator: &testcase.Evaluator{Type: testcase.EvaluatorContains}}
	fmt.Println(*tc.Grade("The capital of France is Paris."), *tc.Grade("Lyon"))
	fmt.Println(new(testcase.TestCase).Grade("no expected output") == nil)
	// Output:
	// true false
	// true
}

func TestSimilarity(t *testing.T) {
	for name, c := range map[string]struct {
		a, b string
		want float64
	}{
		"Same":          {"Paris", " Paris\n", 1},
		"Nothing":       {"abc", "xyz", 0},
		"Kitten":        {"kitten", "sitting", 1 - 3.0/7},
		"Runes":         {"café", "cafe", 0.75},
		"EmptyAndSome":  {"", "ab", 0},
		"LongUsesWords": {strings.Repeat("a ", 1500) + "end", strings.Repeat("a ", 1500) + "fin", 3000.0 / 3002},
	} {
		t.Run(name, func(t *testing.T) {
			assert.InDelta(t, c.want, testcase.Similarity(c.a, c.b), 1e-9)
		})
	}
}

func TestEvaluator_JudgeNeedsExpected(t *testing.T) {
	for _, typ := range []string{testcase.EvaluatorExact, testcase.EvaluatorJSONEqual, testcase.EvaluatorSimilarity} {
		_, err := testcase.Evaluator{Type: typ}.Judge("x", nil)
		assert.Error(t, err, typ)
	}
	v, err := testcase.Evaluator{Type: testcase.EvaluatorSimilarity}.Judge("abcd", expect("abcx"))
	assert.NoError(t, err)
	assert.InDelta(t, 0.75, v.Score, 1e-9)
	assert.False(t, v.Passed)
	assert.Contains(t, v.Reason, "under the threshold")
}
