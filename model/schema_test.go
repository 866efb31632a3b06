package model_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

const personSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "minLength": 1},
		"age": {"type": "integer", "minimum": 0},
		"tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}}
	},
	"required": ["name", "age"],
	"additionalProperties": false,
	"$defs": {"tag": {"type": "string", "enum": ["a", "b"]}}
}`

func TestValidateSchema(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, s := range []string{
			personSchema,
			`{}`,
			`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}`,
		} {
			assert.NoError(t, model.ValidateSchema(json.RawMessage(s)), s)
		}
	})
	tests := []struct {
		name   string
		schema string
		want   []canvas.Detail
	}{
		{"NotJSON", `{"type": `, []canvas.Detail{{Path: model.SchemaPath, Message: "must be valid JSON"}}},
		{"TrailingData", `{} {}`, []canvas.Detail{{Path: model.SchemaPath, Message: "must be valid JSON"}}},
		{"NotObject", `true`, []canvas.Detail{{Path: model.SchemaPath, Message: "must be an object"}}},
		{"BadKeyword", `{"type": "object", "properties": {"a": {"type": 5}}}`, nil},
		{"NegativeLength", `{"minLength": -1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := model.ValidateSchema(json.RawMessage(tt.schema))
			require.Error(t, err)
			assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			details := canvas.ErrorDetails(err)
			require.NotEmpty(t, details)
			if tt.want != nil {
				assert.Equal(t, tt.want, details)
			}
			for _, d := range details {
				assert.Regexp(t, "^"+model.SchemaPath, d.Path)
				assert.NotEmpty(t, d.Message)
			}
		})
	}
	t.Run("BadKeywordPath", func(t *testing.T) {
		err := model.ValidateSchema(json.RawMessage(`{"properties": {"a": {"type": 5}}}`))
		require.Error(t, err)
		paths := []string{}
		for _, d := range canvas.ErrorDetails(err) {
			paths = append(paths, d.Path)
		}
		assert.Contains(t, paths, model.SchemaPath+"/properties/a/type")
	})
	t.Run("NoExternalReferences", func(t *testing.T) {
		for _, s := range []string{
			`{"$ref": "file:///etc/passwd"}`,
			`{"$ref": "http://127.0.0.1:1/schema.json"}`,
			`{"$ref": "#/$defs/missing"}`,
		} {
			err := model.ValidateSchema(json.RawMessage(s))
			assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), s)
			assert.NotContains(t, canvas.ErrorMessage(err), "root:", s)
		}
	})
}

func TestSchema_Validate(t *testing.T) {
	s, err := model.CompileSchema(json.RawMessage(personSchema))
	require.NoError(t, err)

	t.Run("OK", func(t *testing.T) {
		assert.NoError(t, s.Validate(`{"name": "Ann", "age": 41, "tags": ["a"]}`))
		assert.NoError(t, s.Validate(" {\"name\": \"Bo\", \"age\": 1e1}\n"))
	})
	t.Run("NotJSON", func(t *testing.T) {
		err := s.Validate(`Sure! Here is the JSON: {"name": "Ann"}`)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, "The model's output is not valid JSON, as its structured output schema requires.", canvas.ErrorMessage(err))
		assert.Equal(t, []canvas.Detail{{Path: "/output", Message: "must be one JSON value"}}, canvas.ErrorDetails(err))
	})
	t.Run("Mismatch", func(t *testing.T) {
		err := s.Validate(`{"name": "", "age": -1, "tags": ["c"], "extra": true}`)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, "The model's output does not match its structured output schema.", canvas.ErrorMessage(err))
		paths := map[string]bool{}
		for _, d := range canvas.ErrorDetails(err) {
			paths[d.Path] = true
			assert.NotEmpty(t, d.Message)
		}
		assert.Equal(t, map[string]bool{"/output": true, "/output/name": true, "/output/age": true, "/output/tags/0": true}, paths)
	})
	t.Run("MissingRequired", func(t *testing.T) {
		err := model.ValidateOutput(json.RawMessage(personSchema), `{"name": "Ann"}`)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		require.Len(t, canvas.ErrorDetails(err), 1)
		assert.Equal(t, "/output", canvas.ErrorDetails(err)[0].Path)
		assert.Contains(t, canvas.ErrorDetails(err)[0].Message, "age")
	})
	t.Run("InvalidSchema", func(t *testing.T) {
		err := model.ValidateOutput(json.RawMessage(`{"type": 5}`), `{}`)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	})
}
