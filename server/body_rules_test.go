package server_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestBody_UnknownMembersIgnored sends every JSON-body route its request
// with a member no schema lists: every route ignores it, as DESIGN.md says,
// and answers as it would without it.
func TestBody_UnknownMembersIgnored(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range jsonBodyCases(t, cases) {
		t.Run(c.route, func(t *testing.T) {
			r := c.request(t)
			body := withMember(r.body.(map[string]any), "unknownMember", map[string]any{"nested": []int{1}})
			res := e.Do(c.method(), r.path, e.Admin, body, r.headers...)
			assert.Equal(t, c.ok, res.Status, "%s", res.Body)
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
