package testcase

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGenerationInput_Variables(t *testing.T) {
	t.Run("NoFiles", func(t *testing.T) {
		in := generationInput{Variables: map[string]any{"name": "Ada"}}
		assert.Equal(t, map[string]any{"name": "Ada"}, in.variables())
	})
	t.Run("Files", func(t *testing.T) {
		in := generationInput{
			Variables: map[string]any{"name": "Ada", "given": map[string]any{"file_url": "vault://kept"}},
			Files: []File{
				{Index: 2, VariableName: "docs", URL: "https://example.com/b.pdf"},
				{Index: 1, VariableName: "docs", VaultURL: "vault://a", URL: "https://example.com/ignored"},
				{Index: 0, VariableName: "photo", VaultURL: "vault://p"},
				{Index: 3, VariableName: "given", VaultURL: "vault://not-used"},
				{Index: 4, Name: "no variable", VaultURL: "vault://x"},
				{Index: 5, VariableName: "empty"},
			},
		}
		assert.Equal(t, map[string]any{
			"name":  "Ada",
			"given": map[string]any{"file_url": "vault://kept"},
			"photo": map[string]any{"file_url": "vault://p"},
			"docs":  []any{map[string]any{"file_url": "vault://a"}, map[string]any{"file_url": "https://example.com/b.pdf"}},
		}, in.variables())
		assert.Len(t, in.Variables, 2, "the test case's own variables are not changed")
	})
}
