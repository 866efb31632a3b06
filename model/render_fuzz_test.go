package model_test

import (
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// FuzzRenderSize renders any message text with one optional text variable,
// of any name and value, through the public Render. Rendering never fails
// for it, keeps the one message and its role, leaves a text without "{{"
// as it is, and grows the text by at most the value's length for each
// "{{" in it: a placeholder is replaced by the value once, and nothing
// else is added, so the output's size is bounded by its input's.
func FuzzRenderSize(f *testing.F) {
	f.Add("Hello, {{name}}!", "name", "Ada")
	f.Add("{{ name }} and {{name}} and {{other}}", "name", "{{name}}")
	f.Add("{{{{name}}}}", "name", "}}")
	f.Add("no placeholders", "x", "y")
	f.Add("{{name", "name", "v")
	f.Add("{{\tname\n}}", "name", strings.Repeat("v", 100))
	f.Fuzz(func(t *testing.T, content, name, value string) {
		msgs := []canvas.Message{{Role: canvas.RoleSystem, Content: content}}
		defs := []canvas.Variable{{Name: name, Type: canvas.VariableText}}
		out, err := model.Render(msgs, defs, map[string]any{name: value})
		if err != nil {
			t.Fatalf("Render(%q, %q=%q): %v", content, name, value, err)
		}
		if len(out) != 1 || out[0].Role != canvas.RoleSystem {
			t.Fatalf("Render(%q) = %+v: want the one system message", content, out)
		}
		got := out[0].Content
		if !strings.Contains(content, "{{") && got != content {
			t.Fatalf("Render(%q) = %q: a text without placeholders changed", content, got)
		}
		if bound := len(content) + strings.Count(content, "{{")*len(value); len(got) > bound {
			t.Fatalf("Render(%q, %q=%q) is %d bytes, more than %d", content, name, value, len(got), bound)
		}
	})
}
