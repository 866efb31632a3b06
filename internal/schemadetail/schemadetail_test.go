package schemadetail_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/schemadetail"
)

const schemaURL = "mem:///schemadetail/test.json"

// decode reads a JSON document with numbers as json.Number, as request
// bodies and workflow configs are read.
func decode(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// mustValidate validates instance against schema and returns the failure.
func mustValidate(t testing.TB, schema string, instance any) *jsonschema.ValidationError {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	require.NoError(t, c.AddResource(schemaURL, strings.NewReader(schema)))
	s, err := c.Compile(schemaURL)
	require.NoError(t, err)
	err = s.Validate(instance)
	var ve *jsonschema.ValidationError
	require.True(t, errors.As(err, &ve), "want a validation error, got %v", err)
	return ve
}

func TestDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		schema   string
		instance string
		want     []canvas.Detail
	}{
		{"Required", `{"required": ["a", "b/c", "d"]}`, `{"d": 1}`, []canvas.Detail{
			{Path: "/p/a", Message: "is required"},
			{Path: "/p/b~1c", Message: "is required"},
		}},
		{"AdditionalPropertiesMembers", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "z": 2, "y/x": 3}`, []canvas.Detail{
			{Path: "/p/y~1x", Message: `is not allowed: unknown field "y/x"; the fields are "a"`},
			{Path: "/p/z", Message: `is not allowed: unknown field "z"; did you mean "a"?`},
		}},
		{"AdditionalPropertiesNearest", `{"properties": {"message": {}, "messages": {}, "title": {}}, "additionalProperties": false}`,
			`{"mesage": 1, "Title": 2, "prompt_id": 3}`, []canvas.Detail{
				{Path: "/p/Title", Message: `is not allowed: unknown field "Title"; did you mean "title"?`},
				{Path: "/p/mesage", Message: `is not allowed: unknown field "mesage"; did you mean "message"?`},
				{Path: "/p/prompt_id", Message: `is not allowed: unknown field "prompt_id"; the fields are "message", "messages", "title"`},
			}},
		{"AdditionalPropertiesSnakeCase", `{"properties": {"promptId": {}, "title": {}}, "additionalProperties": false}`,
			`{"prompt_id": 1, "titel": 2}`, []canvas.Detail{
				{Path: "/p/prompt_id", Message: `is not allowed: unknown field "prompt_id"; did you mean "promptId"?`},
				{Path: "/p/titel", Message: `is not allowed: unknown field "titel"; did you mean "title"?`},
			}},
		{"AdditionalPropertiesNoFields", `{"properties": {}, "additionalProperties": false}`, `{"a": 1}`, []canvas.Detail{
			{Path: "/p/a", Message: "is not allowed: this object has no fields"},
		}},
		{"AdditionalPropertiesWithPatterns", `{"patternProperties": {"^x-": {}}, "additionalProperties": false}`, `{"x-a": 1, "b": 2}`, []canvas.Detail{
			{Path: "/p", Message: "has properties that are not allowed"},
		}},
		{"Type", `{"type": "string"}`, `1`, []canvas.Detail{{Path: "/p", Message: "must be a string"}}},
		{"TypeUnion", `{"type": ["integer", "null", "object"]}`, `"x"`, []canvas.Detail{
			{Path: "/p", Message: "must be an integer, null or an object"},
		}},
		{"EnumOne", `{"enum": ["a"]}`, `"b"`, []canvas.Detail{{Path: "/p", Message: `must be "a"`}}},
		{"EnumMany", `{"enum": ["a", 1, null]}`, `"b"`, []canvas.Detail{{Path: "/p", Message: `must be one of "a", 1, null`}}},
		{"Const", `{"const": {"k": true}}`, `{}`, []canvas.Detail{{Path: "/p", Message: `must be {"k":true}`}}},
		{"MinLengthOne", `{"minLength": 1}`, `""`, []canvas.Detail{{Path: "/p", Message: "must not be empty"}}},
		{"MinLength", `{"minLength": 3}`, `"ab"`, []canvas.Detail{{Path: "/p", Message: "must be at least 3 characters"}}},
		{"MaxLength", `{"maxLength": 2}`, `"abc"`, []canvas.Detail{{Path: "/p", Message: "must be at most 2 characters"}}},
		{"Minimum", `{"minimum": 0}`, `-1`, []canvas.Detail{{Path: "/p", Message: "must be at least 0"}}},
		{"Maximum", `{"maximum": 1.5}`, `2`, []canvas.Detail{{Path: "/p", Message: "must be at most 1.5"}}},
		{"ExclusiveMinimum", `{"exclusiveMinimum": 0}`, `0`, []canvas.Detail{{Path: "/p", Message: "must be greater than 0"}}},
		{"ExclusiveMaximum", `{"exclusiveMaximum": 10}`, `10`, []canvas.Detail{{Path: "/p", Message: "must be less than 10"}}},
		{"MinItems", `{"minItems": 1}`, `[]`, []canvas.Detail{{Path: "/p", Message: "must have at least 1 items"}}},
		{"MaxItems", `{"maxItems": 1}`, `[1, 2]`, []canvas.Detail{{Path: "/p", Message: "must have at most 1 items"}}},
		{"UniqueItems", `{"uniqueItems": true}`, `[1, 1]`, []canvas.Detail{{Path: "/p", Message: "must not hold the same item twice"}}},
		{"FormatUUID", `{"format": "uuid"}`, `"nope"`, []canvas.Detail{{Path: "/p", Message: "must be a UUID"}}},
		{"FormatDateTime", `{"format": "date-time"}`, `"yesterday"`, []canvas.Detail{{Path: "/p", Message: "must be an RFC 3339 date-time"}}},
		{"FormatOther", `{"format": "email"}`, `"nope"`, []canvas.Detail{{Path: "/p", Message: "must be a valid email"}}},
		{"Pattern", `{"pattern": "^a+$"}`, `"b"`, []canvas.Detail{{Path: "/p", Message: "must match the pattern ^a+$"}}},
		{"PatternMessage", `{"pattern": "^a+$", "x-pattern-message": "must be made of a's"}`, `"b"`, []canvas.Detail{
			{Path: "/p", Message: "must be made of a's"},
		}},
		{"UnevaluatedProperties", `{"properties": {"a": {}}, "unevaluatedProperties": false}`, `{"a": 1, "b": 2}`, []canvas.Detail{
			{Path: "/p/b", Message: "is not allowed"},
		}},
		{"UnwordedKeywordKeepsLibraryMessage", `{"multipleOf": 2}`, `3`, []canvas.Detail{{Path: "/p", Message: "3 not multipleOf 2"}}},
		{"AnyOfTypesOnly", `{"anyOf": [{"type": "string"}, {"type": "array"}]}`, `1`, []canvas.Detail{
			{Path: "/p", Message: "must be a string or an array"},
		}},
		{"OneOfOneCandidate", `{"oneOf": [{"type": "string"}, {"type": "object", "required": ["k"]}]}`, `{}`, []canvas.Detail{
			{Path: "/p/k", Message: "is required"},
		}},
		{"AnyOfNoShape", `{"anyOf": [{"minLength": 3}, {"pattern": "^x"}]}`, `"a"`, []canvas.Detail{
			{Path: "/p", Message: "does not match any of the allowed shapes"},
		}},
		{"NestedSortedWithoutDuplicates", `{"$defs": {"item": {"type": "object", "required": ["id"]}},
			"properties": {"b": {"items": {"allOf": [{"$ref": "#/$defs/item"}, {"required": ["id"]}]}}, "a": {"type": "integer"}}}`,
			`{"b": [{}, {"id": 1}, 3], "a": "x"}`, []canvas.Detail{
				{Path: "/p/a", Message: "must be an integer"},
				{Path: "/p/b/0/id", Message: "is required"},
				{Path: "/p/b/2", Message: "must be an object"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inst := decode(t, tt.instance)
			ve := mustValidate(t, tt.schema, inst)
			got := schemadetail.Details(ve, decode(t, tt.schema), inst, "/p")
			assert.Equal(t, tt.want, got)
		})
	}
}

// A schema document decoded with float64 numbers quotes them as written,
// not in exponent form.
func TestDetails_Float64Schema(t *testing.T) {
	t.Parallel()
	const schema = `{"maximum": 1000000, "maxLength": 2000000}`
	var doc any
	require.NoError(t, json.Unmarshal([]byte(schema), &doc))
	for _, tc := range []struct {
		instance string
		want     string
	}{
		{`1000001`, "must be at most 1000000"},
		{`"` + strings.Repeat("x", 2000001) + `"`, "must be at most 2000000 characters"},
	} {
		inst := decode(t, tc.instance)
		got := schemadetail.Details(mustValidate(t, schema, inst), doc, inst, "/json")
		assert.Equal(t, []canvas.Detail{{Path: "/json", Message: tc.want}}, got)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	doc := decode(t, `{"a": {"b/c": [10, {"~d": "x"}]}}`)
	assert.Equal(t, doc, schemadetail.Lookup(doc, ""))
	assert.Equal(t, json.Number("10"), schemadetail.Lookup(doc, "/a/b~1c/0"))
	assert.Equal(t, "x", schemadetail.Lookup(doc, "/a/b~1c/1/~0d"))
	for _, ptr := range []string{"/nope", "/a/b~1c/2", "/a/b~1c/-1", "/a/b~1c/x", "/a/b~1c/0/deeper"} {
		assert.Nil(t, schemadetail.Lookup(doc, ptr), ptr)
	}
}

func Example() {
	const schema = `{"type": "object", "required": ["name"], "properties": {"size": {"type": "integer", "maximum": 10}}}`
	c := jsonschema.NewCompiler()
	_ = c.AddResource("mem:///example.json", strings.NewReader(schema))
	s := c.MustCompile("mem:///example.json")

	var doc, body any
	_ = json.Unmarshal([]byte(schema), &doc)
	_ = json.Unmarshal([]byte(`{"size": 12}`), &body)
	var ve *jsonschema.ValidationError
	if errors.As(s.Validate(body), &ve) {
		for _, d := range schemadetail.Details(ve, doc, body, "/json") {
			fmt.Println(d.Path, d.Message)
		}
	}
	// Output:
	// /json/name is required
	// /json/size must be at most 10
}
