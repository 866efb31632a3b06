package model_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasttemplate"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// benchPrompt returns a prompt of about 2 KB using ten variables, their
// definitions and values. Tags are written without inner spaces because
// fasttemplate, the peer, does not trim them.
func benchPrompt() (string, []canvas.Variable, map[string]any) {
	const filler = "You are a careful assistant. Answer in plain language, cite the context you were given, " +
		"and keep every claim tied to the facts below. Do not invent numbers, names or dates, and say so when unsure. "
	var b strings.Builder
	defs := make([]canvas.Variable, 0, 10)
	values := make(map[string]any, 10)
	for i := range 10 {
		name := fmt.Sprintf("var_%d", i)
		b.WriteString(filler[:190])
		b.WriteString("{{" + name + "}}")
		defs = append(defs, canvas.Variable{Name: name, Type: canvas.VariableText, Required: true})
		values[name] = fmt.Sprintf("value number %d for the prompt", i)
	}
	return b.String(), defs, values
}

func BenchmarkRender(b *testing.B) {
	prompt, defs, values := benchPrompt()
	msgs := system(prompt)
	want := fasttemplate.ExecuteStringStd(prompt, "{{", "}}", values)
	got, err := model.Render(msgs, defs, values)
	if err != nil || got[0].Content != want {
		b.Fatalf("Render disagrees with fasttemplate: %v", err)
	}

	b.Run("Render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := model.Render(msgs, defs, values); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The peer parses the template on every call, as Render does.
	b.Run("fasttemplate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = fasttemplate.ExecuteStringStd(prompt, "{{", "}}", values)
		}
	})
	// The peer with its template parsed once, outside the loop: a bound no
	// per-request renderer has, shown for reference.
	b.Run("fasttemplate_preparsed", func(b *testing.B) {
		tpl := fasttemplate.New(prompt, "{{", "}}")
		b.ReportAllocs()
		for b.Loop() {
			_ = tpl.ExecuteStringStd(values)
		}
	})
}
