package testcase_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/testcase"
)

// expect and verdict return pointers for the table below.
func expect(s string) *string { return &s }
func verdict(b bool) *bool    { return &b }

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
