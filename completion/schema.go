package completion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// SchemaPath is the JSON pointer of a version's structured output schema in
// a request body; ValidateSchema reports problems under it.
const SchemaPath = "/json/configuration/structuredOutput/schema"

// schemaURL names the one in-memory resource a schema is compiled from.
const schemaURL = "mem:///structured-output.json"

// Schema is a compiled structured output schema, safe for concurrent use.
type Schema struct {
	schema *jsonschema.Schema
}

// CompileSchema compiles a structured output schema: a JSON object that is a
// valid JSON Schema (draft 2020-12 unless it names another with $schema).
// References must stay inside the schema; nothing is fetched from the file
// system or the network. Any problem is a VALIDATION error whose details
// point into the schema under SchemaPath.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.Decode(new(any)) != io.EOF {
		return nil, canvas.Invalid("The structured output schema is not valid JSON.",
			canvas.Detail{Path: SchemaPath, Message: "must be valid JSON"})
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, canvas.Invalid("The structured output schema must be a JSON object.",
			canvas.Detail{Path: SchemaPath, Message: "must be an object"})
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("reference to %s is not allowed", url)
	}
	if err := c.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		return nil, canvas.Invalid("The structured output schema is not valid JSON.",
			canvas.Detail{Path: SchemaPath, Message: "must be valid JSON"})
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, canvas.Invalid("The structured output schema is not a valid JSON Schema.", schemaDetails(err)...)
	}
	return &Schema{schema: s}, nil
}

// ValidateSchema checks a structured output schema when a version is saved:
// nil when CompileSchema accepts it, else CompileSchema's VALIDATION error.
func ValidateSchema(schema json.RawMessage) error {
	_, err := CompileSchema(schema)
	return err
}

// schemaDetails turns a compilation error into details: one per meta-schema
// violation, at its place in the schema, or one for the whole schema (an
// unresolvable reference, for example).
func schemaDetails(err error) []canvas.Detail {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return leafDetails(SchemaPath, ve)
	}
	msg := err.Error()
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		msg = strings.TrimPrefix(se.Err.Error(), "jsonschema: ")
	}
	return []canvas.Detail{{Path: SchemaPath, Message: strings.ReplaceAll(msg, schemaURL, "")}}
}

// leafDetails lists the innermost causes of ve, the ones that say what is
// wrong, each at base plus its instance location.
func leafDetails(base string, ve *jsonschema.ValidationError) []canvas.Detail {
	var out []canvas.Detail
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, canvas.Detail{Path: base + e.InstanceLocation, Message: e.Message})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
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
		e.Details = leafDetails(OutputPath, ve)
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
