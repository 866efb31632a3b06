package promptfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/promptfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() *promptfile.Canvas {
	md := "**Hi**"
	return &promptfile.Canvas{FormatVersion: promptfile.FormatVersion, ID: "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f",
		Title: "Support bot: <billing> & more", Project: "support", CustomTags: []string{"a"},
		Versions: []promptfile.Version{{ID: "v1", Title: "First", Messages: []promptfile.Message{
			{Role: canvas.RoleUser, Content: "ignored", Index: 1},
			{Role: canvas.RoleSystem, Content: "Hi {{name}}", MarkdownContent: &md},
		}}},
		Environments: []promptfile.Environment{{Name: "production", VersionID: "v1"}, {Name: "empty"}}}
}

func TestFileName(t *testing.T) {
	assert.Equal(t, "support-bot-billing-more-6f1c2a3e.json", promptfile.FileName(sample()))
	assert.Equal(t, "6f1c2a3e.json", promptfile.FileName(&promptfile.Canvas{ID: "6f1c2a3e-7d5b"}))
}

func TestCanvas_Served(t *testing.T) {
	c := sample()
	v := c.Served("production")
	require.NotNil(t, v)
	cv := c.CanvasVersion(v)
	assert.Equal(t, c.ID, cv.PromptID)
	assert.Equal(t, "Hi {{name}}", *cv.Content)
	assert.Equal(t, "**Hi**", *cv.MarkdownContent)
	assert.Equal(t, canvas.RoleSystem, cv.Message.Role)
	assert.Equal(t, []string{"a"}, cv.PromptCustomTags)
	assert.Nil(t, c.Served("empty"))
	assert.Nil(t, c.Served("nowhere"))
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	raw, err := promptfile.Encode(sample())
	require.NoError(t, err)
	assert.Contains(t, string(raw), "<billing> & more", "HTML is not escaped")
	require.NoError(t, os.WriteFile(filepath.Join(dir, promptfile.FileName(sample())), raw, 0o600))
	files, err := promptfile.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, sample(), files[0])

	require.NoError(t, os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"formatVersion": 2, "id": "x"}`), 0o600))
	_, err = promptfile.ReadDir(dir)
	assert.ErrorContains(t, err, "format version 2")
}
