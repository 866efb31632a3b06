package server

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/schemadetail"
)

// openAPIDocument is the OpenAPI 3.1 description of every endpoint. Its
// components/schemas are also the JSON Schemas that request bodies are
// validated against, so the document and the validation cannot disagree.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIURL names the document as a JSON Schema resource; the request
// schemas are compiled as fragments of it so that their $refs resolve.
const openAPIURL = "https://promptcanvas.invalid/openapi.json"

// schemaSet serves the OpenAPI document and validates request bodies against
// its component schemas. Each schema is compiled once, on first use.
type schemaSet struct {
	etag string
	// doc is the parsed document, used to read the keyword values that
	// validation messages quote.
	doc any

	mu       sync.Mutex // serializes the compiler, which is not safe for concurrent use
	compiler *jsonschema.Compiler
	compiled map[string]*compiledSchema
}

// compiledSchema is one component schema, compiled on first use.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// loadSchemas parses the embedded document and prepares a compiler for its
// component schemas.
func loadSchemas() (*schemaSet, error) {
	var doc any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		return nil, fmt.Errorf("server: parse openapi.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	if err := c.AddResource(openAPIURL, bytes.NewReader(openAPIDocument)); err != nil {
		return nil, fmt.Errorf("server: load openapi.json: %w", err)
	}
	sum := sha256.Sum256(openAPIDocument)
	s := &schemaSet{
		etag:     `"` + hex.EncodeToString(sum[:16]) + `"`,
		doc:      doc,
		compiler: c,
		compiled: map[string]*compiledSchema{},
	}
	schemas, _ := schemadetail.Lookup(doc, "/components/schemas").(map[string]any)
	for name := range schemas {
		s.compiled[name] = &compiledSchema{}
	}
	return s, nil
}

// schema returns the compiled component schema called name. An unknown name
// is a bug in the caller, reported as an internal error.
func (s *schemaSet) schema(name string) (*jsonschema.Schema, error) {
	cs, ok := s.compiled[name]
	if !ok {
		return nil, fmt.Errorf("server: no schema %q in openapi.json", name)
	}
	cs.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		cs.schema, cs.err = s.compiler.Compile(openAPIURL + "#/components/schemas/" + name)
		if cs.err != nil {
			cs.err = fmt.Errorf("server: compile schema %q: %w", name, cs.err)
		}
	})
	return cs.schema, cs.err
}

// validate checks doc, a decoded JSON value (numbers as json.Number or
// float64), against the named component schema. It returns nil when doc is
// valid, INVALID_ENVIRONMENT_NAME when an environment name breaks its rules
// (see envNameError), a VALIDATION error listing every problem as a detail
// whose path is "/json" followed by the JSON pointer of the offending
// value, or an internal error when the schema cannot be used.
func (s *schemaSet) validate(name string, doc any) error {
	sch, err := s.schema(name)
	if err != nil {
		return err
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("server: validate against %q: %w", name, err)
	}
	if err := envNameError(ve, doc); err != nil {
		return err
	}
	return canvas.Invalid("Request body failed validation.", schemadetail.Details(ve, s.doc, doc, "/json")...)
}

// handleOpenAPI serves the embedded OpenAPI document with a strong ETag, and
// 304 Not Modified when the caller already has it.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("ETag", s.schemas.etag)
	w.Header().Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), s.schemas.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
	return nil
}

// etagMatches reports whether an If-None-Match header names etag (or is *).
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}
