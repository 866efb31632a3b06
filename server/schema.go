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
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
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
	schemas, _ := lookupPointer(doc, "/components/schemas").(map[string]any)
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
// valid, a VALIDATION error listing every problem as a detail whose path is
// "/json" followed by the JSON pointer of the offending value, or an
// internal error when the schema cannot be used.
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
	details := s.details(ve, doc)
	if len(details) == 0 {
		details = []canvas.Detail{{Path: "/json", Message: "is not valid"}}
	}
	return canvas.Invalid("Request body failed validation.", details...)
}

// details turns a validation error tree into one detail per leaf problem,
// sorted by path and without duplicates.
func (s *schemaSet) details(ve *jsonschema.ValidationError, doc any) []canvas.Detail {
	var out []canvas.Detail
	s.collect(ve, doc, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	uniq := out[:0]
	for i, d := range out {
		if i == 0 || d != out[i-1] {
			uniq = append(uniq, d)
		}
	}
	return uniq
}

func (s *schemaSet) collect(ve *jsonschema.ValidationError, doc any, out *[]canvas.Detail) {
	switch keyword(ve) {
	case "anyOf", "oneOf":
		if len(ve.Causes) > 0 {
			s.collectAlternatives(ve, doc, out)
			return
		}
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			s.collect(c, doc, out)
		}
		return
	}
	*out = append(*out, s.leaf(ve, doc)...)
}

// collectAlternatives reports an anyOf or oneOf failure. Alternatives that
// fail only because the value has another type are set aside: when exactly
// one alternative is left, its problems are the ones reported; otherwise the
// value is reported once, naming the types it may have.
func (s *schemaSet) collectAlternatives(ve *jsonschema.ValidationError, doc any, out *[]canvas.Detail) {
	var candidates [][]canvas.Detail
	var types []string
	for _, branch := range ve.Causes {
		var ds []canvas.Detail
		s.collect(branch, doc, &ds)
		if t, ok := s.typeOnly(branch, ve.InstanceLocation); ok {
			types = append(types, t...)
			continue
		}
		candidates = append(candidates, ds)
	}
	path := "/json" + ve.InstanceLocation
	switch {
	case len(candidates) == 1:
		*out = append(*out, candidates[0]...)
	case len(candidates) == 0 && len(types) > 0:
		*out = append(*out, canvas.Detail{Path: path, Message: "must be " + typeList(types)})
	default:
		*out = append(*out, canvas.Detail{Path: path, Message: "does not match any of the allowed shapes"})
	}
}

// typeOnly reports whether err is nothing but a type mismatch of the value at
// loc, and returns the types that were expected.
func (s *schemaSet) typeOnly(err *jsonschema.ValidationError, loc string) ([]string, bool) {
	for len(err.Causes) == 1 {
		err = err.Causes[0]
	}
	if len(err.Causes) > 0 || keyword(err) != "type" || err.InstanceLocation != loc {
		return nil, false
	}
	return schemaTypes(s.keywordValue(err)), true
}

// leaf writes the message of one failed keyword in plain words, quoting the
// keyword's value from the document.
func (s *schemaSet) leaf(ve *jsonschema.ValidationError, doc any) []canvas.Detail {
	path := "/json" + ve.InstanceLocation
	one := func(msg string) []canvas.Detail { return []canvas.Detail{{Path: path, Message: msg}} }
	kw := keyword(ve)
	val := s.keywordValue(ve)
	switch kw {
	case "required":
		obj, _ := lookupPointer(doc, ve.InstanceLocation).(map[string]any)
		names, _ := val.([]any)
		var out []canvas.Detail
		for _, n := range names {
			name, _ := n.(string)
			if _, ok := obj[name]; !ok {
				out = append(out, canvas.Detail{Path: path + "/" + escapePointer(name), Message: "is required"})
			}
		}
		if len(out) > 0 {
			return out
		}
	case "type":
		return one("must be " + typeList(schemaTypes(val)))
	case "maxLength":
		return one(fmt.Sprintf("must be at most %s characters", number(val)))
	case "minLength":
		if number(val) == "1" {
			return one("must not be empty")
		}
		return one(fmt.Sprintf("must be at least %s characters", number(val)))
	case "minimum":
		return one("must be at least " + number(val))
	case "maximum":
		return one("must be at most " + number(val))
	case "exclusiveMinimum":
		return one("must be greater than " + number(val))
	case "exclusiveMaximum":
		return one("must be less than " + number(val))
	case "minItems":
		return one(fmt.Sprintf("must have at least %s items", number(val)))
	case "maxItems":
		return one(fmt.Sprintf("must have at most %s items", number(val)))
	case "enum":
		if items, ok := val.([]any); ok {
			parts := make([]string, len(items))
			for i, it := range items {
				b, _ := json.Marshal(it)
				parts[i] = string(b)
			}
			if len(parts) == 1 {
				return one("must be " + parts[0])
			}
			return one("must be one of " + strings.Join(parts, ", "))
		}
	case "const":
		b, _ := json.Marshal(val)
		return one("must be " + string(b))
	case "format":
		f, _ := val.(string)
		switch f {
		case "uuid":
			return one("must be a UUID")
		case "date-time":
			return one("must be an RFC 3339 date-time")
		}
		return one("must be a valid " + f)
	case "pattern":
		// A schema may word its pattern for people in x-pattern-message.
		if msg, ok := s.siblingKeyword(ve, "x-pattern-message").(string); ok {
			return one(msg)
		}
		return one(fmt.Sprintf("must match the pattern %v", val))
	case "additionalProperties", "unevaluatedProperties", "false":
		return one("is not allowed")
	}
	return one(ve.Message)
}

// keywordValue returns the value, in the document, of the keyword that
// failed.
func (s *schemaSet) keywordValue(ve *jsonschema.ValidationError) any {
	_, ptr, ok := strings.Cut(ve.AbsoluteKeywordLocation, "#")
	if !ok {
		return nil
	}
	return lookupPointer(s.doc, ptr)
}

// siblingKeyword returns the value of another keyword of the schema whose
// keyword failed.
func (s *schemaSet) siblingKeyword(ve *jsonschema.ValidationError, name string) any {
	_, ptr, ok := strings.Cut(ve.AbsoluteKeywordLocation, "#")
	if !ok {
		return nil
	}
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return nil
	}
	return lookupPointer(s.doc, ptr[:i+1]+escapePointer(name))
}

// keyword returns the last segment of an error's keyword location: the
// keyword that failed.
func keyword(ve *jsonschema.ValidationError) string {
	loc := ve.KeywordLocation
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

// lookupPointer resolves a JSON pointer (RFC 6901) in a decoded JSON value;
// it returns nil when the pointer leads nowhere.
func lookupPointer(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaTypes returns the value of a type keyword as a list.
func schemaTypes(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// typeList names JSON types for a message: "a string or null".
func typeList(types []string) string {
	names := map[string]string{
		"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
		"object": "an object", "array": "an array", "null": "null",
	}
	parts := make([]string, 0, len(types))
	seen := map[string]bool{}
	for _, t := range types {
		if seen[t] {
			continue
		}
		seen[t] = true
		if n, ok := names[t]; ok {
			parts = append(parts, n)
		} else {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "of another type"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// number formats a keyword's numeric value.
func number(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
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
