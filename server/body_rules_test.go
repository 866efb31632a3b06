package server_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// jsonBodyCases returns the cases whose request is a JSON object, after
// checking that they are exactly the operations openapi.json gives a JSON
// request body.
func jsonBodyCases(t *testing.T, cases []routeCase) []routeCase {
	t.Helper()
	var documented []string
	for path, item := range loadOpenAPI(t).doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			if _, ok := op.RequestBody.Value.Content["application/json"]; ok {
				documented = append(documented, method+" "+path)
			}
		}
	}
	var out []routeCase
	var sent []string
	for _, c := range cases {
		if _, ok := c.request(t).body.(map[string]any); ok {
			out = append(out, c)
			// A {name...} wildcard is the document's {name}.
			sent = append(sent, strings.ReplaceAll(c.route, "...}", "}"))
		}
	}
	sort.Strings(documented)
	sort.Strings(sent)
	require.Equal(t, documented, sent, "every operation with a JSON body has a case that sends one")
	return out
}

// withMember returns a copy of body with one more member.
func withMember(body map[string]any, name string, value any) map[string]any {
	out := map[string]any{name: value}
	for k, v := range body {
		out[k] = v
	}
	return out
}

// misspell returns name with its last two letters swapped: a typing slip
// one edit away from the name.
func misspell(name string) string {
	r := []rune(name)
	if len(r) < 2 {
		return name + name
	}
	r[len(r)-1], r[len(r)-2] = r[len(r)-2], r[len(r)-1]
	return string(r)
}

// TestBody_UnknownMembersRefused sends every JSON-body route its request
// with a misspelling of one of its members added: every route refuses it
// with 422 VALIDATION, one detail at the unknown member that names the
// member it resembles, as DESIGN.md says. A body without members gets a
// member no schema lists, which is refused alike.
func TestBody_UnknownMembersRefused(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range jsonBodyCases(t, cases) {
		t.Run(c.route, func(t *testing.T) {
			r := c.request(t)
			body := r.body.(map[string]any)
			names := make([]string, 0, len(body))
			for k := range body {
				names = append(names, k)
			}
			sort.Strings(names)
			unknown, want := "unknownMember", "is not allowed"
			if len(names) > 0 && misspell(names[0]) != names[0] {
				unknown = misspell(names[0])
				want = `did you mean "` + names[0] + `"?`
			}
			res := e.Do(c.method(), r.path, e.Admin, withMember(body, unknown, "x"), r.headers...)
			requireInvalidAt(t, res, "/json/"+unknown)
			assert.Contains(t, readError(t, res).Details[0].Message, want)
		})
	}
}

// TestBody_UnknownMembersEveryProblem checks that each unknown member of a
// body is its own detail, nested ones at their pointer, beside the other
// problems of the body.
func TestBody_UnknownMembersEveryProblem(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	res := e.Do(http.MethodPost, "/prompt-version", e.Editor, map[string]any{
		"promptId": w.Canvas, "title": "v", "mesage": map[string]any{"role": "user", "content": "Hi"},
		"variables":     []any{map[string]any{"name": "x", "tpye": "string"}},
		"configuration": map[string]any{"model": "echo", "temperature": "hot"},
	})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	b := readError(t, res)
	assert.Equal(t, canvas.EINVALID, b.Code)
	assert.Equal(t, []canvas.Detail{
		{Path: "/json/configuration/temperature", Message: "must be a number"},
		{Path: "/json/mesage", Message: `is not allowed: unknown field "mesage"; did you mean "message"?`},
		{Path: "/json/variables/0/tpye", Message: `is not allowed: unknown field "tpye"; did you mean "type"?`},
	}, b.Details)
}

// TestBody_OpenObjectsStayOpen checks that the objects the contract leaves
// open take members of any name: a version's configuration (extra keys kept
// for the model), variable values, a test case's metadata, a workflow run's
// input and a tool call's arguments.
func TestBody_OpenObjectsStayOpen(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	tests := []struct {
		name, method, path string
		body               map[string]any
		want               int
	}{
		{"ConfigurationExtraKeys", http.MethodPost, "/prompt-version", map[string]any{"promptId": w.Canvas, "title": "v",
			"configuration": map[string]any{"model": "echo", "seed": 7, "vendorOption": map[string]any{"a": 1}}}, http.StatusCreated},
		{"VariableValues", http.MethodPost, "/v2/chat/completions", map[string]any{"canvas_id": w.Canvas,
			"variables": map[string]any{"name": "Ada", "anyOtherName": "x"}}, http.StatusOK},
		{"TaskVariables", http.MethodPost, "/v1/tasks", map[string]any{"prompt": "Hi {{who}}", "variables": map[string]any{"who": "Ada"}}, http.StatusAccepted},
		{"TestCaseMetadata", http.MethodPost, "/test-case", map[string]any{"promptId": w.Canvas, "title": "t",
			"metadata": map[string]any{"source": "manual", "ticket": "T-1"}}, http.StatusCreated},
		{"WorkflowInput", http.MethodPost, "/workflow/runs", map[string]any{"versionId": w.WorkflowVersion,
			"input": map[string]any{"name": "Ada", "extra": true}}, http.StatusCreated},
		{"ToolCallArguments", http.MethodPost, "/v2/chat/completions", map[string]any{"canvas_id": w.Canvas,
			"variables": map[string]any{"name": "Ada"}, "messages": []any{
				map[string]any{"role": "assistant", "toolCalls": []any{map[string]any{"id": "c1", "name": "f", "arguments": map[string]any{"any": 1}}}},
				map[string]any{"role": "tool", "toolCallId": "c1", "content": "done"},
			}}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.Do(tt.method, tt.path, e.Editor, tt.body)
			assert.Equal(t, tt.want, res.Status, "%s", res.Body)
		})
	}
}

// TestBody_InvalidUTF8EveryRoute sends every JSON-body route its request
// with a member that is not valid UTF-8: every route reads its body through
// the one decoder, which refuses it at its pointer.
func TestBody_InvalidUTF8EveryRoute(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range jsonBodyCases(t, cases) {
		t.Run(c.route, func(t *testing.T) {
			r := c.request(t)
			raw, err := json.Marshal(withMember(r.body.(map[string]any), "note", "MARK"))
			require.NoError(t, err)
			raw = []byte(strings.Replace(string(raw), "MARK", "caf\xe9", 1))
			requireInvalidAt(t, e.Do(c.method(), r.path, e.Admin, raw, r.headers...), "/json/note")
		})
	}
}
