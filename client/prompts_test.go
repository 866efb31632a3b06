package client_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestPrompts_Snapshot reads prompts from a snapshot directory while the
// server cannot be reached (nothing listens at its address).
func TestPrompts_Snapshot(t *testing.T) {
	c, err := client.New(closedURL(t), client.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := &promptfile.Canvas{FormatVersion: promptfile.FormatVersion, ID: "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f",
		Title: "Greeter", LayoutVersion: "v2", InferencesPercentage: "0", CustomTags: []string{},
		Versions: []promptfile.Version{{ID: "0e1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f", Title: "v1",
			Configuration: wire.Configuration{Model: "echo"},
			Messages:      []promptfile.Message{{Role: wire.RoleSystem, Content: "Offline {{name}}"}}}},
		Environments: []promptfile.Environment{{Name: "production", VersionID: "0e1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"}}}
	raw, err := promptfile.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, promptfile.FileName(file)), raw, 0o600); err != nil {
		t.Fatal(err)
	}

	p, err := c.NewPrompts(client.PromptsOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pr, err := p.Get(context.Background(), file.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Stale || pr.Err == nil {
		t.Errorf("Stale, Err = %v, %v; want a stale prompt with the connection error", pr.Stale, pr.Err)
	}
	if *pr.Version.Content != "Offline {{name}}" || pr.Version.PromptID != file.ID {
		t.Errorf("Version = %+v, want the snapshot's", pr.Version)
	}
	if _, err := p.Get(context.Background(), file.ID, "staging"); err == nil {
		t.Error("an environment the snapshot does not serve was served")
	}
}
