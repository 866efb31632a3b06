package workflow

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Scope returns the template values a step sees: the run's variables by
// name, and for each ended step of in.Steps "steps.<id>.output" and
// "steps.<id>.status"; an object output also gives
// "steps.<id>.output.<key>" for each of its top-level keys. Outputs are
// decoded with numbers kept as json.Number, so that they render as they
// were written. A step's names win over a variable of the same name.
func Scope(in *StepInput) map[string]any {
	scope := make(map[string]any, len(in.Variables)+2*len(in.Steps))
	for k, v := range in.Variables {
		scope[k] = v
	}
	for id, s := range in.Steps {
		prefix := "steps." + id + "."
		scope[prefix+"status"] = s.Status
		out, err := decodeValue(s.Output)
		if err != nil {
			continue
		}
		scope[prefix+"output"] = out
		if obj, ok := out.(map[string]any); ok {
			for k, v := range obj {
				scope[prefix+"output."+k] = v
			}
		}
	}
	return scope
}

// lookupScope returns the value Scope(in) holds for name without building
// the whole scope: a template reads a few names, and a long run has many
// ended steps.
func lookupScope(in *StepInput, name string) (any, bool) {
	if rest, ok := strings.CutPrefix(name, "steps."); ok {
		// A step id may itself hold dots: try each split.
		for i := strings.IndexByte(rest, '.'); i >= 0; {
			if s, ok := in.Steps[rest[:i]]; ok {
				if v, ok := stepValue(s, rest[i+1:]); ok {
					return v, true
				}
			}
			j := strings.IndexByte(rest[i+1:], '.')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	v, ok := in.Variables[name]
	return v, ok
}

// stepValue returns the value of field ("status", "output" or
// "output.<key>") of step s.
func stepValue(s *Step, field string) (any, bool) {
	switch field {
	case "status":
		return s.Status, true
	case "output":
		out, err := decodeValue(s.Output)
		return out, err == nil
	}
	key, ok := strings.CutPrefix(field, "output.")
	if !ok {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(s.Output, &obj); err != nil || obj == nil {
		return nil, false
	}
	raw, ok := obj[key]
	if !ok {
		return nil, false
	}
	v, err := decodeValue(raw)
	return v, err == nil
}

// placeholderRE matches at least every placeholder model.Render
// replaces ("{{", blanks, a name without blanks or braces, blanks, "}}").
// It only chooses which scope values to compute; Render does the
// rendering.
var placeholderRE = regexp.MustCompile(`\{\{[ \t\r\n]*([^ \t\r\n{}]+)[ \t\r\n]*\}\}`)

// stepTemplate is text with {{name}} placeholders over a step's Scope,
// prepared once when its node compiles.
type stepTemplate struct {
	names []string
}

// newTemplate prepares the texts a node renders.
func newTemplate(texts ...string) stepTemplate {
	var t stepTemplate
	seen := map[string]bool{}
	for _, s := range texts {
		for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				t.names = append(t.names, m[1])
			}
		}
	}
	return t
}

// values returns the part of Scope(in) the template reads.
func (t stepTemplate) values(in *StepInput) map[string]any {
	values := make(map[string]any, len(t.names))
	for _, name := range t.names {
		if v, ok := lookupScope(in, name); ok {
			values[name] = v
		}
	}
	return values
}

// render renders messages with model.Render over the step's scope: a
// placeholder without a value is left as written. defs, when given, are
// the run's file variables, so that their values become file references
// the model call resolves.
func (t stepTemplate) render(in *StepInput, messages []canvas.Message, defs []canvas.Variable) ([]model.Message, error) {
	return model.Render(messages, defs, t.values(in))
}

// renderString renders one text.
func (t stepTemplate) renderString(in *StepInput, text string) (string, error) {
	out, err := t.render(in, []canvas.Message{{Role: canvas.RoleUser, Content: text}}, nil)
	if err != nil {
		return "", err
	}
	return out[0].Content, nil
}
