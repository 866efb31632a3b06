package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Render turns a version's messages into the messages sent to a model: the
// messages in index order (deleted ones left out), each with its
// {{variable}} placeholders replaced.
//
// A placeholder is "{{", optional blanks, a name without blanks or braces,
// optional blanks and "}}"; anything else is text. Before anything is
// rendered every definition in defs is checked against values, and all the
// problems are returned as one VALIDATION error with a detail per variable at
// "/json/variables/<name>": a required variable without a value, or a value
// of the wrong kind for the declared type. A nil value counts as no value.
// See the package documentation for how each kind is written into the text;
// each file marker is also recorded, with its span, in the message's
// FileRefs, for a FileResolver to replace with the file itself.
//
// Render only reads its arguments, makes one pass over each message and
// returns a message's content unchanged (without copying) when there is
// nothing to replace in it. The rendered messages together hold at most
// DefaultMaxRenderBytes (see RenderMax).
func Render(messages []canvas.Message, defs []canvas.Variable, values map[string]any) ([]Message, error) {
	return RenderMax(messages, defs, values, DefaultMaxRenderBytes)
}

// DefaultMaxRenderBytes bounds what Render writes: the default bound of a
// request body, so that a prompt never grows past what a client could have
// sent in one request.
const DefaultMaxRenderBytes = 4 << 20

// RenderMax is Render with its own bound: once the rendered contents
// together would pass max bytes (a value repeated by many placeholders),
// it stops before writing the value that would pass it and returns
// PAYLOAD_TOO_LARGE naming that variable at "/json/variables/<name>". A
// max of zero or less means DefaultMaxRenderBytes.
func RenderMax(messages []canvas.Message, defs []canvas.Variable, values map[string]any, max int) ([]Message, error) {
	jsonScalars, err := checkValues(defs, values)
	if err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultMaxRenderBytes
	}
	r := renderer{defs: defs, values: values, jsonScalars: jsonScalars, max: max}
	order := messageOrder(messages)
	out := make([]Message, 0, len(messages))
	for i := range messages {
		m := &messages[i]
		if order != nil {
			m = &messages[order[i]]
		}
		if m.DeletedAt != nil {
			continue
		}
		r.refs = nil
		content := r.render(m.Content)
		if r.over != "" {
			return nil, tooLarge(r.over, max)
		}
		r.total += len(content)
		out = append(out, Message{Role: m.Role, Content: content, FileRefs: r.refs})
	}
	return out, nil
}

// tooLarge is the error of a rendering that would pass max bytes when the
// value of variable name is written.
func tooLarge(name string, max int) error {
	return &canvas.Error{Code: canvas.EPAYLOADTOOLARGE,
		Message: fmt.Sprintf("The rendered prompt would be larger than %d bytes.", max),
		Details: []canvas.Detail{{Path: variablePath(name), Message: fmt.Sprintf("renders past the %d-byte bound", max)}}}
}

// messageOrder returns the positions of messages sorted by Index, keeping the
// given order among equal indexes, or nil when messages are already in
// order (the usual case, as the store returns them so).
func messageOrder(messages []canvas.Message) []int {
	if sort.SliceIsSorted(messages, func(a, b int) bool { return messages[a].Index < messages[b].Index }) {
		return nil
	}
	order := make([]int, len(messages))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return messages[order[a]].Index < messages[order[b]].Index
	})
	return order
}

// renderer holds what one Render call substitutes. jsonScalars is set when a
// declared json variable holds a string, number or boolean, the only case in
// which a scalar is not written as its plain text.
type renderer struct {
	defs        []canvas.Variable
	values      map[string]any
	jsonScalars bool
	// refs collects the file references of the message being rendered.
	refs []FileRef
	// max bounds the rendered contents together; total counts the messages
	// rendered so far, and over names the variable whose value would have
	// passed max, once one would.
	max, total int
	over       string
}

// fits reports whether n more bytes after the b.Len() written to the
// current message keep the rendering within max, and records name as the
// variable that passed it otherwise.
func (r *renderer) fits(b *strings.Builder, name string, n int) bool {
	if r.total+b.Len()+n <= r.max {
		return true
	}
	r.over = name
	return false
}

// render returns s with every placeholder that a value or a definition
// resolves replaced; other placeholders stay as written.
func (r *renderer) render(s string) string {
	i := strings.Index(s, "{{")
	if i < 0 {
		return s
	}
	var b strings.Builder
	last := 0 // s[last:] is not yet written to b
	for {
		name, end := parseTag(s, i)
		next := i + 1
		if end > 0 {
			next = end
			v, ok := r.values[name]
			if ok && v == nil {
				ok = false
			}
			if ok || r.declared(name) != nil {
				if b.Cap() == 0 {
					b.Grow(len(s) + len(s)/2 + 64)
				}
				b.WriteString(s[last:i])
				if ok {
					if str, isStr := v.(string); isStr && !r.fits(&b, name, len(str)) {
						return ""
					}
					r.writeValue(&b, name, v)
					if !r.fits(&b, name, 0) {
						return ""
					}
				}
				last = end
			}
		}
		k := strings.Index(s[next:], "{{")
		if k < 0 {
			break
		}
		i = next + k
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// parseTag reads the placeholder that starts with the "{{" at s[i:]. It
// returns the name and the position just after the closing "}}", or end 0
// when s[i:] does not start a placeholder.
func parseTag(s string, i int) (name string, end int) {
	j := i + 2
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	start := j
	for j < len(s) && !isBlank(s[j]) && s[j] != '{' && s[j] != '}' {
		j++
	}
	stop := j
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	if stop == start || j+1 >= len(s) || s[j] != '}' || s[j+1] != '}' {
		return "", 0
	}
	return s[start:stop], j + 2
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// declared returns the first definition named name, or nil.
func (r *renderer) declared(name string) *canvas.Variable {
	for i := range r.defs {
		if r.defs[i].Name == name {
			return &r.defs[i]
		}
	}
	return nil
}

// writeValue writes v as the text of variable name. checkValues has already
// matched v's kind to the declared type, so the Go type decides the text
// except for json variables (always JSON) and file variables (markers).
func (r *renderer) writeValue(b *strings.Builder, name string, v any) {
	if r.jsonScalars {
		if d := r.declared(name); d != nil && d.Type == canvas.VariableJSON {
			writeJSON(b, v)
			return
		}
	}
	var num [32]byte
	switch v := v.(type) {
	case string:
		b.WriteString(v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(string(v))
	case float64:
		b.Write(appendFloat(num[:0], v, 64))
	case float32:
		b.Write(appendFloat(num[:0], float64(v), 32))
	case int:
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	case int8:
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	case int16:
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	case int32:
		b.Write(strconv.AppendInt(num[:0], int64(v), 10))
	case int64:
		b.Write(strconv.AppendInt(num[:0], v, 10))
	case uint:
		b.Write(strconv.AppendUint(num[:0], uint64(v), 10))
	case uint8:
		b.Write(strconv.AppendUint(num[:0], uint64(v), 10))
	case uint16:
		b.Write(strconv.AppendUint(num[:0], uint64(v), 10))
	case uint32:
		b.Write(strconv.AppendUint(num[:0], uint64(v), 10))
	case uint64:
		b.Write(strconv.AppendUint(num[:0], v, 10))
	default:
		if d := r.declared(name); d != nil && d.Type == canvas.VariableFile {
			r.writeFiles(b, d, v)
			return
		}
		writeJSON(b, v)
	}
}

// appendFloat formats f the way encoding/json does, so that a number renders
// as it was written in the request: no exponent between 1e-6 and 1e21.
func appendFloat(dst []byte, f float64, bits int) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
		bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// Turn e-09 into e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// writeJSON writes v as compact JSON with <, > and & left as they are. A
// value JSON cannot encode (only possible for an undeclared variable given by
// Go code, a channel for example) is written with fmt's %v.
func writeJSON(b *strings.Builder, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.WriteString(fmt.Sprint(v))
		return
	}
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// writeFiles writes a file value of variable d (one {"file_url"} object or
// an array of them) as "[file: <url>]" markers separated by "\n", and
// records a FileRef spanning each marker.
func (r *renderer) writeFiles(b *strings.Builder, d *canvas.Variable, v any) {
	switch v := v.(type) {
	case map[string]any:
		url := v["file_url"].(string)
		start := b.Len()
		b.WriteString("[file: ")
		b.WriteString(url)
		b.WriteByte(']')
		r.refs = append(r.refs, FileRef{Variable: d.Name, URL: url,
			Multimodal: d.ProcessingOptions.AllowMultimodal, Start: start, End: b.Len()})
	case []any:
		for i, f := range v {
			if i > 0 {
				b.WriteByte('\n')
			}
			r.writeFiles(b, d, f)
		}
	}
}

// checkValues checks every definition against values and returns one
// VALIDATION error listing every missing or ill-typed variable. It also
// reports whether a json variable holds a scalar.
func checkValues(defs []canvas.Variable, values map[string]any) (jsonScalars bool, err error) {
	var missing, invalid []string
	var details []canvas.Detail
	for i := range defs {
		d := &defs[i]
		v, ok := values[d.Name]
		if !ok || v == nil {
			if d.Required {
				missing = append(missing, d.Name)
				details = append(details, canvas.Detail{Path: variablePath(d.Name), Message: "required variable has no value"})
			}
			continue
		}
		if msg := checkKind(d.Type, v); msg != "" {
			invalid = append(invalid, d.Name)
			details = append(details, canvas.Detail{Path: variablePath(d.Name), Message: msg})
			continue
		}
		if d.Type == canvas.VariableJSON {
			switch v.(type) {
			case map[string]any, []any:
			default:
				jsonScalars = true
			}
		}
	}
	if len(details) == 0 {
		return jsonScalars, nil
	}
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "Missing required variables: "+strings.Join(missing, ", ")+".")
	}
	if len(invalid) > 0 {
		msg = append(msg, "Invalid variable values: "+strings.Join(invalid, ", ")+".")
	}
	return false, canvas.Invalid(strings.Join(msg, " "), details...)
}

// checkKind returns why v cannot be the value of a variable of type typ, or
// "" when it can. Unknown types accept any value.
func checkKind(typ string, v any) string {
	switch typ {
	case canvas.VariableText:
		if _, ok := v.(string); !ok {
			return "must be a string"
		}
	case canvas.VariableNumber:
		if !isNumber(v) {
			return "must be a number"
		}
	case canvas.VariableBoolean:
		if _, ok := v.(bool); !ok {
			return "must be a boolean"
		}
	case canvas.VariableFile:
		if !isFiles(v) {
			return `must be a file {"file_url": "<url>"} or an array of files`
		}
	case canvas.VariableJSON:
		if _, err := json.Marshal(v); err != nil {
			return "must be a JSON value"
		}
	}
	return ""
}

func isNumber(v any) bool {
	switch v := v.(type) {
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case float32:
		return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return err == nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

// isFiles reports whether v is a file value as decoded from JSON: an object
// with a non-empty string file_url, or an array of such objects.
func isFiles(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		u, ok := v["file_url"].(string)
		return ok && u != ""
	case []any:
		for _, f := range v {
			if _, ok := f.(map[string]any); !ok || !isFiles(f) {
				return false
			}
		}
		return true
	}
	return false
}

// variablePath is the JSON pointer of variable name in a completion request.
func variablePath(name string) string {
	if strings.ContainsAny(name, "~/") {
		name = strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	}
	return "/json/variables/" + name
}
