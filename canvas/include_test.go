package canvas_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/canvas"
)

func TestParseIncludes(t *testing.T) {
	const id = "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"
	for _, tc := range []struct {
		name    string
		content string
		want    []string // IncludeRef.String of each
		bad     int
	}{
		{"None", "Hello {{name}}", nil, 0},
		{"Production", "a {{> " + id + "}} b", []string{id + "@production"}, 0},
		{"Blanks", "{{>" + id + "@staging   }}", []string{id + "@staging"}, 0},
		{"VersionIndex", "{{> " + id + "@v12}}", []string{id + "@v12"}, 0},
		{"UpperCaseID", "{{> 6F1C2D3E-4B5A-4C6D-8E7F-9A0B1C2D3E4F}}", []string{id + "@production"}, 0},
		{"Several", "{{> " + id + "}}{{> " + id + "@v1}}", []string{id + "@production", id + "@v1"}, 0},
		{"NotAUUID", "{{> persona}}", nil, 1},
		{"BadEnv", "{{> " + id + "@Staging}}", nil, 1},
		{"ReservedEnv", "{{> " + id + "@latest}}", nil, 1},
		{"ZeroIndex", "{{> " + id + "@v0}}", nil, 1},
		{"Unclosed", "{{> " + id, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range canvas.ParseIncludes(tc.content) {
				got = append(got, r.String())
				assert.Equal(t, "{{", tc.content[r.Start:r.Start+2])
				assert.Equal(t, "}}", tc.content[r.End-2:r.End])
			}
			assert.Equal(t, tc.want, got)
			assert.Len(t, canvas.BadIncludes(tc.content), tc.bad)
		})
	}
}
