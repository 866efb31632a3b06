package model_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// system returns a version holding one system message at index 0.
func system(content string) []canvas.Message {
	return []canvas.Message{{Role: canvas.RoleSystem, Content: content, Index: 0}}
}

func text(name string, required bool) canvas.Variable {
	return canvas.Variable{Name: name, Type: canvas.VariableText, Required: required}
}

func typed(name, typ string) canvas.Variable {
	return canvas.Variable{Name: name, Type: typ}
}

// decode turns a JSON object into values the way a request body arrives.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestRender_OK(t *testing.T) {
	tests := []struct {
		name    string
		content string
		defs    []canvas.Variable
		values  string
		want    string
	}{
		{"Plain", "Write about {{topic}}.", []canvas.Variable{text("topic", true)}, `{"topic":"owls"}`, "Write about owls."},
		{"SpacesInTag", "Write about {{ topic }} and {{\ttopic\n}}.", []canvas.Variable{text("topic", true)}, `{"topic":"owls"}`, "Write about owls and owls."},
		{"NoPlaceholders", "Just text, with { braces } and }} and {x}.", nil, `{"x":"y"}`, "Just text, with { braces } and }} and {x}."},
		{"OptionalMissingIsEmpty", "a{{tone}}b", []canvas.Variable{text("tone", false)}, `{}`, "ab"},
		{"OptionalNullIsEmpty", "a{{ tone }}b", []canvas.Variable{text("tone", false)}, `{"tone":null}`, "ab"},
		{"UnknownLeftAsWritten", "Hi {{ name }} and {{other}}", nil, `{}`, "Hi {{ name }} and {{other}}"},
		{"UndeclaredValueUsed", "Hi {{name}}", nil, `{"name":"Ann"}`, "Hi Ann"},
		{"NoRecursiveExpansion", "{{a}}|{{b}}", []canvas.Variable{text("a", true), text("b", true)}, `{"a":"{{b}}","b":"{{a}}"}`, "{{b}}|{{a}}"},
		{"Unterminated", "start {{topic and {{ topic", []canvas.Variable{text("topic", true)}, `{"topic":"x"}`, "start {{topic and {{ topic"},
		{"UnterminatedAfterTag", "{{topic}} {{", []canvas.Variable{text("topic", true)}, `{"topic":"x"}`, "x {{"},
		{"Adjacent", "{{a}}{{b}}{{a}}", nil, `{"a":"1","b":"2"}`, "121"},
		{"TripleBraces", "{{{a}}}", nil, `{"a":"1"}`, "{1}"},
		{"BlankInName", "{{first name}}", nil, `{"first":"x","name":"y"}`, "{{first name}}"},
		{"EmptyTag", "{{}} {{  }}", nil, `{"":"x"}`, "{{}} {{  }}"},
		{"Unicode", "Grüße an {{ naïve }} — {{日本}}!", nil, `{"naïve":"Zoë","日本":"東京"}`, "Grüße an Zoë — 東京!"},
		{"ValueWithBraces", "<{{a}}>", nil, `{"a":"}}{{"}`, "<}}{{>"},
		{"Number", "n={{n}} f={{f}} e={{e}}", []canvas.Variable{typed("n", canvas.VariableNumber), typed("f", canvas.VariableNumber), typed("e", canvas.VariableNumber)}, `{"n":42,"f":0.25,"e":1e-9}`, "n=42 f=0.25 e=1e-9"},
		{"Boolean", "{{b}}/{{c}}", []canvas.Variable{typed("b", canvas.VariableBoolean), typed("c", canvas.VariableBoolean)}, `{"b":true,"c":false}`, "true/false"},
		{"JSONObject", "data: {{d}}", []canvas.Variable{typed("d", canvas.VariableJSON)}, `{"d":{"b":[1,2],"a":"<x&y>"}}`, `data: {"a":"<x&y>","b":[1,2]}`},
		{"JSONString", "data: {{d}}", []canvas.Variable{typed("d", canvas.VariableJSON)}, `{"d":"hi"}`, `data: "hi"`},
		{"UndeclaredObject", "{{o}}", nil, `{"o":{"k":1}}`, `{"k":1}`},
		{"File", "see {{doc}}", []canvas.Variable{typed("doc", canvas.VariableFile)}, `{"doc":{"file_url":"vault://f1"}}`, "see [file: vault://f1]"},
		{"Files", "see {{docs}}", []canvas.Variable{typed("docs", canvas.VariableFile)}, `{"docs":[{"file_url":"https://x/a.pdf"},{"file_url":"vault://f2"}]}`, "see [file: https://x/a.pdf]\n[file: vault://f2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := model.Render(system(tt.content), tt.defs, decode(t, tt.values))
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, canvas.RoleSystem, got[0].Role)
			assert.Equal(t, tt.want, got[0].Content) // file references: TestRender_FileRefs
		})
	}
}

func TestRender_GoValues(t *testing.T) {
	defs := []canvas.Variable{typed("i", canvas.VariableNumber), typed("u", canvas.VariableNumber), typed("f", canvas.VariableNumber), typed("n", canvas.VariableNumber)}
	got, err := model.Render(system("{{i}} {{u}} {{f}} {{n}}"), defs, map[string]any{
		"i": -7, "u": uint8(8), "f": float32(1.5), "n": json.Number("12.50"),
	})
	require.NoError(t, err)
	assert.Equal(t, "-7 8 1.5 12.50", got[0].Content)
}

func TestRender_Messages(t *testing.T) {
	deleted := time.Now()
	msgs := []canvas.Message{
		{Role: canvas.RoleAssistant, Content: "Sure, {{name}}.", Index: 2},
		{Role: canvas.RoleUser, Content: "I am {{name}}.", Index: 1},
		{Role: canvas.RoleUser, Content: "gone", Index: 3, DeletedAt: &deleted},
		{Role: canvas.RoleSystem, Content: "You help {{ name }}.", Index: 0},
	}
	got, err := model.Render(msgs, []canvas.Variable{text("name", true)}, map[string]any{"name": "Ann"})
	require.NoError(t, err)
	assert.Equal(t, []model.Message{
		{Role: canvas.RoleSystem, Content: "You help Ann."},
		{Role: canvas.RoleUser, Content: "I am Ann."},
		{Role: canvas.RoleAssistant, Content: "Sure, Ann."},
	}, got)
	assert.Equal(t, "Sure, {{name}}.", msgs[0].Content, "Render must not modify its input")
}

func TestRender_Invalid(t *testing.T) {
	tests := []struct {
		name        string
		defs        []canvas.Variable
		values      string
		wantMessage string
		want        []canvas.Detail
	}{
		{
			name:        "MissingEveryRequired",
			defs:        []canvas.Variable{text("topic", true), text("tone", false), text("a/b", true), text("audience", true)},
			values:      `{"audience":null}`,
			wantMessage: "Missing required variables: topic, a/b, audience.",
			want: []canvas.Detail{
				{Path: "/json/variables/topic", Message: "required variable has no value"},
				{Path: "/json/variables/a~1b", Message: "required variable has no value"},
				{Path: "/json/variables/audience", Message: "required variable has no value"},
			},
		},
		{
			name: "WrongKinds",
			defs: []canvas.Variable{
				text("t", true), typed("n", canvas.VariableNumber), typed("b", canvas.VariableBoolean),
				typed("f", canvas.VariableFile), typed("g", canvas.VariableFile), typed("j", canvas.VariableJSON),
			},
			values:      `{"t":{"x":1},"n":"3","b":"yes","f":{"url":"x"},"g":[{"file_url":"a"},"b"],"j":[1]}`,
			wantMessage: "Invalid variable values: t, n, b, f, g.",
			want: []canvas.Detail{
				{Path: "/json/variables/t", Message: "must be a string"},
				{Path: "/json/variables/n", Message: "must be a number"},
				{Path: "/json/variables/b", Message: "must be a boolean"},
				{Path: "/json/variables/f", Message: `must be a file {"file_url": "<url>"} or an array of files`},
				{Path: "/json/variables/g", Message: `must be a file {"file_url": "<url>"} or an array of files`},
			},
		},
		{
			name:        "MissingAndWrong",
			defs:        []canvas.Variable{text("a", true), text("b", true)},
			values:      `{"b":5}`,
			wantMessage: "Missing required variables: a. Invalid variable values: b.",
			want: []canvas.Detail{
				{Path: "/json/variables/a", Message: "required variable has no value"},
				{Path: "/json/variables/b", Message: "must be a string"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := model.Render(system("{{t}}"), tt.defs, decode(t, tt.values))
			require.Error(t, err)
			assert.Nil(t, got)
			assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			assert.Equal(t, tt.wantMessage, canvas.ErrorMessage(err))
			assert.Equal(t, tt.want, canvas.ErrorDetails(err))
		})
	}
}

// referenceTag is the placeholder grammar written as a regular expression,
// an independent statement of what Render replaces.
var referenceTag = regexp.MustCompile(`\{\{[ \t\r\n]*([^ \t\r\n{}]+)[ \t\r\n]*\}\}`)

func FuzzRender(f *testing.F) {
	for _, seed := range [][2]string{
		{"Write about {{topic}}.", "owls"},
		{"{{ topic }}{{topic}}", "{{topic}}"},
		{"{{{topic}}}", "}}"},
		{"{{topic", "x"},
		{"no tags at all", "x"},
		{"{{ a b }} {{\ttopic\r\n}}", "ü"},
		{"{{{{{{", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, content, value string) {
		msgs := system(content)

		// With no values and no definitions, every placeholder is left as
		// written, so the content comes back unchanged.
		got, err := model.Render(msgs, nil, nil)
		require.NoError(t, err)
		require.Equal(t, content, got[0].Content)

		// With a value, the output is what the reference grammar gives, and
		// the value is inserted verbatim, never expanded again.
		values := map[string]any{"topic": value}
		got, err = model.Render(msgs, nil, values)
		require.NoError(t, err)
		want := referenceTag.ReplaceAllStringFunc(content, func(tag string) string {
			if referenceTag.FindStringSubmatch(tag)[1] == "topic" {
				return value
			}
			return tag
		})
		require.Equal(t, want, got[0].Content)

		// Declaring the variable as optional without a value removes exactly
		// its placeholders.
		got, err = model.Render(msgs, []canvas.Variable{text("topic", false)}, nil)
		require.NoError(t, err)
		n := 0
		for _, m := range referenceTag.FindAllStringSubmatch(content, -1) {
			if m[1] == "topic" {
				n++
			}
		}
		want = referenceTag.ReplaceAllStringFunc(content, func(tag string) string {
			if referenceTag.FindStringSubmatch(tag)[1] == "topic" {
				return ""
			}
			return tag
		})
		require.Equal(t, want, got[0].Content)
		if n == 0 {
			require.Equal(t, content, got[0].Content)
		}
		if !strings.Contains(content, "{{") {
			require.Equal(t, content, got[0].Content)
		}
	})
}
