package schemadetail

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Details turns ve, the failure of validating instance against a schema
// whose decoded document is schema, into details whose paths are prefix
// followed by the JSON pointer of the offending value. There is one detail
// per failed keyword, its value quoted from schema; a missing or refused
// property is reported at its own pointer; an anyOf or oneOf that fails on
// type alone is reported once, naming the types it allows. They are sorted
// by path, without duplicates, and never empty: when nothing can be named
// the value at prefix "is not valid".
//
// schema is the document that ve's absolute keyword locations point into
// (their fragment is a JSON pointer in it); numbers in it and in instance
// may be float64 or json.Number.
func Details(ve *jsonschema.ValidationError, schema, instance any, prefix string) []canvas.Detail {
	w := &worder{schema: schema, instance: instance, prefix: prefix}
	var out []canvas.Detail
	w.collect(ve, &out)
	if len(out) == 0 {
		return []canvas.Detail{{Path: prefix, Message: "is not valid"}}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	uniq := out[:0]
	for i, d := range out {
		if i == 0 || d != out[i-1] {
			uniq = append(uniq, d)
		}
	}
	return uniq
}

// worder holds what the messages of one validation failure are read from.
type worder struct {
	schema, instance any
	prefix           string
}

func (w *worder) collect(ve *jsonschema.ValidationError, out *[]canvas.Detail) {
	if kw := keyword(ve); (kw == "anyOf" || kw == "oneOf") && len(ve.Causes) > 0 {
		w.alternatives(ve, out)
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			w.collect(c, out)
		}
		return
	}
	*out = append(*out, w.leaf(ve)...)
}

// alternatives reports an anyOf or oneOf failure. Alternatives that fail
// only because the value has another type are set aside: when exactly one
// is left, its problems are reported; otherwise the value is reported once,
// naming the types it may have.
func (w *worder) alternatives(ve *jsonschema.ValidationError, out *[]canvas.Detail) {
	var candidates [][]canvas.Detail
	var types []string
	for _, branch := range ve.Causes {
		if t, ok := w.typeOnly(branch, ve.InstanceLocation); ok {
			types = append(types, t...)
			continue
		}
		var ds []canvas.Detail
		w.collect(branch, &ds)
		candidates = append(candidates, ds)
	}
	path := w.prefix + ve.InstanceLocation
	switch {
	case len(candidates) == 1:
		*out = append(*out, candidates[0]...)
	case len(candidates) == 0 && len(types) > 0:
		*out = append(*out, canvas.Detail{Path: path, Message: "must be " + typeList(types)})
	default:
		*out = append(*out, canvas.Detail{Path: path, Message: "does not match any of the allowed shapes"})
	}
}

// typeOnly reports whether err is nothing but a type mismatch of the value
// at loc, and returns the types that were expected.
func (w *worder) typeOnly(err *jsonschema.ValidationError, loc string) ([]string, bool) {
	for len(err.Causes) == 1 {
		err = err.Causes[0]
	}
	if len(err.Causes) > 0 || keyword(err) != "type" || err.InstanceLocation != loc {
		return nil, false
	}
	return schemaTypes(w.keywordValue(err)), true
}

// leaf words one failed keyword, quoting its value from the schema.
func (w *worder) leaf(ve *jsonschema.ValidationError) []canvas.Detail {
	path := w.prefix + ve.InstanceLocation
	one := func(msg string) []canvas.Detail { return []canvas.Detail{{Path: path, Message: msg}} }
	val := w.keywordValue(ve)
	switch keyword(ve) {
	case "required":
		obj, _ := Lookup(w.instance, ve.InstanceLocation).(map[string]any)
		names, _ := val.([]any)
		var out []canvas.Detail
		for _, n := range names {
			name, _ := n.(string)
			if _, ok := obj[name]; !ok {
				out = append(out, canvas.Detail{Path: path + "/" + escape(name), Message: "is required"})
			}
		}
		if len(out) > 0 {
			return out
		}
	case "additionalProperties":
		if out := w.extraProperties(ve, path); len(out) > 0 {
			return out
		}
		return one("has properties that are not allowed")
	case "type":
		return one("must be " + typeList(schemaTypes(val)))
	case "enum":
		if items, ok := val.([]any); ok {
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = jsonText(it)
			}
			if len(parts) == 1 {
				return one("must be " + parts[0])
			}
			return one("must be one of " + strings.Join(parts, ", "))
		}
	case "const":
		return one("must be " + jsonText(val))
	case "minLength":
		if number(val) == "1" {
			return one("must not be empty")
		}
		return one(fmt.Sprintf("must be at least %s characters", number(val)))
	case "maxLength":
		return one(fmt.Sprintf("must be at most %s characters", number(val)))
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
	case "uniqueItems":
		return one("must not hold the same item twice")
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
		if msg, ok := w.sibling(ve, "x-pattern-message").(string); ok {
			return one(msg)
		}
		return one(fmt.Sprintf("must match the pattern %v", val))
	case "not":
		// A schema may word what it refuses in x-not-message.
		if msg, ok := w.sibling(ve, "x-not-message").(string); ok {
			return one(msg)
		}
		return one("is not allowed")
	case "false", "unevaluatedProperties":
		return one("is not allowed")
	}
	return one(ve.Message)
}

// extraProperties lists the members of the object at ve's instance that
// additionalProperties refused, each at its own pointer under path and
// naming the known field it most likely misspells (see unknownField); nil
// when the schema has patternProperties (which this does not evaluate).
func (w *worder) extraProperties(ve *jsonschema.ValidationError, path string) []canvas.Detail {
	if w.sibling(ve, "patternProperties") != nil {
		return nil
	}
	obj, _ := Lookup(w.instance, ve.InstanceLocation).(map[string]any)
	props, _ := w.sibling(ve, "properties").(map[string]any)
	known := make([]string, 0, len(props))
	for name := range props {
		known = append(known, name)
	}
	sort.Strings(known)
	var out []canvas.Detail
	for name := range obj {
		if _, ok := props[name]; !ok {
			out = append(out, canvas.Detail{Path: path + "/" + escape(name), Message: unknownField(name, known)})
		}
	}
	return out
}

// maxListedFields is how many known fields the message of an unknown field
// lists when none of them is close to it.
const maxListedFields = 12

// unknownField words a member that is not one of known (sorted): the
// nearest known field when one is close enough to be a misspelling ("is
// not allowed; did you mean "message"?"), otherwise the known fields when
// there are few.
func unknownField(name string, known []string) string {
	if len(known) == 0 {
		return "is not allowed: this object has no fields"
	}
	if near, ok := nearest(name, known); ok {
		return fmt.Sprintf("is not allowed: unknown field %s; did you mean %s?", jsonText(name), jsonText(near))
	}
	if len(known) > maxListedFields {
		return fmt.Sprintf("is not allowed: unknown field %s", jsonText(name))
	}
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = jsonText(k)
	}
	return fmt.Sprintf("is not allowed: unknown field %s; the fields are %s", jsonText(name), strings.Join(quoted, ", "))
}

// nearest returns the candidate closest to name in edit distance, ignoring
// case and the difference between camelCase and snake_case, and whether it
// is close enough to be a misspelling of name: at most a third of the
// longer name's letters apart, and at least one. Ties go to the earlier
// candidate.
func nearest(name string, candidates []string) (string, bool) {
	norm := func(s string) []rune {
		return []rune(strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)))
	}
	n := norm(name)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(n, norm(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return "", false
	}
	limit := max(len(n), len(norm(best))) / 3
	return best, bestDist <= max(limit, 1)
}

// editDistance is the Damerau-Levenshtein distance of a and b (optimal
// string alignment: insertions, deletions, substitutions and transpositions
// of neighbours cost one each).
func editDistance(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// keywordValue returns the value, in the schema, of the keyword that
// failed.
func (w *worder) keywordValue(ve *jsonschema.ValidationError) any {
	_, ptr, ok := strings.Cut(ve.AbsoluteKeywordLocation, "#")
	if !ok {
		return nil
	}
	return Lookup(w.schema, ptr)
}

// sibling returns the value of another keyword of the schema whose keyword
// failed.
func (w *worder) sibling(ve *jsonschema.ValidationError, name string) any {
	_, ptr, ok := strings.Cut(ve.AbsoluteKeywordLocation, "#")
	if !ok {
		return nil
	}
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return nil
	}
	return Lookup(w.schema, ptr[:i+1]+escape(name))
}

// keyword returns the keyword that failed: the last segment of its
// location.
func keyword(ve *jsonschema.ValidationError) string {
	loc := ve.KeywordLocation
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

// Lookup resolves a JSON pointer (RFC 6901) in a decoded JSON value; it
// returns nil when the pointer leads nowhere.
func Lookup(v any, ptr string) any {
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

// escape escapes a member name as one JSON pointer token.
func escape(s string) string {
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
	switch len(parts) {
	case 0:
		return "of another type"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// number formats a keyword's numeric value, decoded as float64 or
// json.Number.
func number(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// jsonText is v as JSON, or as Go prints it when it does not encode (a
// schema keyword's value decoded from JSON always encodes).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
