package canvas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// StructuredOutputSchemaPath is the JSON pointer of a version's structured
// output schema in a request body.
const StructuredOutputSchemaPath = "/json/configuration/structuredOutput/schema"

// schemaURL names the one in-memory resource a schema is compiled from.
const schemaURL = "mem:///structured-output.json"

// CompileSchema compiles a structured output schema: a JSON object that is a
// valid JSON Schema (draft 2020-12 unless it names another with $schema).
// References must stay inside the schema; nothing is fetched from the file
// system or the network. Any problem is a VALIDATION error whose details
// point into the schema under path (a JSON pointer such as
// StructuredOutputSchemaPath). It is the one schema check of the project:
// versions are checked with it when saved, and completions compile with it.
func CompileSchema(path string, raw json.RawMessage) (*jsonschema.Schema, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.Decode(new(any)) != io.EOF {
		return nil, Invalid("The structured output schema is not valid JSON.",
			Detail{Path: path, Message: "must be valid JSON"})
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, Invalid("The structured output schema must be a JSON object.",
			Detail{Path: path, Message: "must be an object"})
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("reference to %s is not allowed", url)
	}
	if err := c.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		return nil, Invalid("The structured output schema is not valid JSON.",
			Detail{Path: path, Message: "must be valid JSON"})
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, Invalid("The structured output schema is not a valid JSON Schema.", schemaDetails(path, err)...)
	}
	return s, nil
}

// schemaDetails turns a compilation error into details: one per meta-schema
// violation, at its place in the schema, or one for the whole schema (an
// unresolvable reference, for example).
func schemaDetails(path string, err error) []Detail {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return SchemaErrorDetails(path, ve)
	}
	msg := err.Error()
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		msg = strings.TrimPrefix(se.Err.Error(), "jsonschema: ")
	}
	return []Detail{{Path: path, Message: strings.ReplaceAll(msg, schemaURL, "")}}
}

// SchemaErrorDetails lists the innermost causes of ve, the ones that say what
// is wrong, each at base plus its instance location.
func SchemaErrorDetails(base string, ve *jsonschema.ValidationError) []Detail {
	var out []Detail
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Detail{Path: base + e.InstanceLocation, Message: e.Message})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// Check returns one VALIDATION error listing every problem of c: a
// structured output schema that is not a valid JSON Schema (a
// configuration without structured output, with it disabled, or without a
// schema passes), and tools, provider, credential or fallbacks that do not
// have their shape.
func (c *Configuration) Check() error {
	v := &validator{}
	if so := c.StructuredOutput; so != nil && so.Enabled && len(so.Schema) > 0 && !isNull(so.Schema) {
		if _, err := CompileSchema(StructuredOutputSchemaPath, so.Schema); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				return err
			}
			v.details = append(v.details, e.Details...)
		}
	}
	c.checkTools(v)
	return v.err()
}
