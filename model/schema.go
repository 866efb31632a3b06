package model

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// SchemaPath is the JSON pointer of a version's structured output schema in
// a request body; ValidateSchema reports problems under it.
const SchemaPath = canvas.StructuredOutputSchemaPath

// Schema is a compiled structured output schema, safe for concurrent use.
type Schema struct {
	schema *jsonschema.Schema
}

// CompileSchema compiles a structured output schema with canvas.CompileSchema
// (the one schema check, also applied when a version is saved): a JSON object
// that is a valid JSON Schema, references kept inside it. Any problem is a
// VALIDATION error whose details point into the schema under SchemaPath.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	return CompileSchemaAt(SchemaPath, raw)
}

// CompileSchemaAt is CompileSchema reporting problems under path, for a
// schema given elsewhere in a request (a completion's settings override).
func CompileSchemaAt(path string, raw json.RawMessage) (*Schema, error) {
	s, err := canvas.CompileSchema(path, raw)
	if err != nil {
		return nil, err
	}
	return &Schema{schema: s}, nil
}

// ValidateSchema checks a structured output schema when a version is saved:
// nil when CompileSchema accepts it, else CompileSchema's VALIDATION error.
func ValidateSchema(schema json.RawMessage) error {
	_, err := CompileSchema(schema)
	return err
}

// OutputPath is the JSON pointer prefix of the problems ValidateOutput
// reports: the model's output.
const OutputPath = "/output"

// Validate checks a model's output against the schema. It returns nil when
// output is one JSON value the schema accepts, and otherwise a
// PROVIDER_ERROR (the model did not do what was asked) whose details list
// every problem at OutputPath plus its place in the output.
func (s *Schema) Validate(output string) error {
	var doc any
	dec := json.NewDecoder(strings.NewReader(output))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.Decode(new(any)) != io.EOF {
		return &canvas.Error{
			Code:    canvas.EPROVIDER,
			Message: "The model's output is not valid JSON, as its structured output schema requires.",
			Details: []canvas.Detail{{Path: OutputPath, Message: "must be one JSON value"}},
		}
	}
	err := s.schema.Validate(doc)
	if err == nil {
		return nil
	}
	e := &canvas.Error{
		Code:    canvas.EPROVIDER,
		Message: "The model's output does not match its structured output schema.",
		Err:     err,
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		e.Details = canvas.SchemaErrorDetails(OutputPath, ve)
	}
	return e
}

// ValidateOutput compiles schema and validates output against it, for a
// single use; keep the *Schema from CompileSchema to validate many outputs.
// An invalid schema is CompileSchema's VALIDATION error, an invalid output
// Validate's PROVIDER_ERROR.
func ValidateOutput(schema json.RawMessage, output string) error {
	s, err := CompileSchema(schema)
	if err != nil {
		return err
	}
	return s.Validate(output)
}
