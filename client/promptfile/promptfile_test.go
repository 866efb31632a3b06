package promptfile_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

func sample() *promptfile.Canvas {
	md := "**Hi**"
	return &promptfile.Canvas{FormatVersion: promptfile.FormatVersion, ID: "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f",
		Title: "Support bot: <billing> & more", Project: "support", CustomTags: []string{"a"},
		Versions: []promptfile.Version{{ID: "v1", Title: "First", Messages: []promptfile.Message{
			{Role: wire.RoleUser, Content: "ignored", Index: 1},
			{Role: wire.RoleSystem, Content: "Hi {{name}}", MarkdownContent: &md},
		}}},
		Environments: []promptfile.Environment{{Name: "production", VersionID: "v1"}, {Name: "empty"}}}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		in   *promptfile.Canvas
		want string
	}{
		{sample(), "support-bot-billing-more-6f1c2a3e.json"},
		{&promptfile.Canvas{ID: "6f1c2a3e-7d5b"}, "6f1c2a3e.json"},
	} {
		if got := promptfile.FileName(tc.in); got != tc.want {
			t.Errorf("FileName(%q) = %q, want %q", tc.in.Title, got, tc.want)
		}
	}
}

func TestCanvas_Served(t *testing.T) {
	c := sample()
	v := c.Served("production")
	if v == nil {
		t.Fatal("production serves nothing")
	}
	cv := c.CanvasVersion(v)
	if cv.PromptID != c.ID {
		t.Errorf("PromptID = %q, want %q", cv.PromptID, c.ID)
	}
	if cv.Content == nil || *cv.Content != "Hi {{name}}" {
		t.Errorf("Content = %v", cv.Content)
	}
	if cv.MarkdownContent == nil || *cv.MarkdownContent != "**Hi**" {
		t.Errorf("MarkdownContent = %v", cv.MarkdownContent)
	}
	if cv.Message == nil || cv.Message.Role != wire.RoleSystem {
		t.Errorf("Message = %+v", cv.Message)
	}
	if !reflect.DeepEqual(cv.PromptCustomTags, []string{"a"}) {
		t.Errorf("PromptCustomTags = %v", cv.PromptCustomTags)
	}
	if cv.Variables == nil {
		t.Error("Variables is nil, want an empty list")
	}
	if c.Served("empty") != nil || c.Served("nowhere") != nil {
		t.Error("an environment that serves nothing serves a version")
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	raw, err := promptfile.Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "<billing> & more") {
		t.Errorf("HTML is escaped: %s", raw)
	}
	if err := os.WriteFile(filepath.Join(dir, promptfile.FileName(sample())), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := promptfile.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !reflect.DeepEqual(files[0], sample()) {
		t.Fatalf("ReadDir = %+v, want the sample", files)
	}

	if err := os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"formatVersion": 2, "id": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := promptfile.ReadDir(dir); err == nil || !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("ReadDir of a future format = %v, want a format version error", err)
	}
}
