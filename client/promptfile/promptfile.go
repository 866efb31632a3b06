// Package promptfile is the on-disk form of prompts as code: one readable
// JSON file per canvas with its versions and what its environments serve,
// written by canvasd export, applied by canvasd import, and read by the Go
// client as its offline snapshot. The files carry no field that changes
// when they are imported elsewhere (no timestamps, authors, publication
// ids or version positions), so export, import and export again gives the
// same bytes.
//
// Credentials are named by their names, never by id (an id means nothing
// in another workspace) and never with their key (a key is never
// exported): a canvas's allowedCredentials lists credential names (null:
// every credential), and a version's configuration, each of its fallbacks
// and each llm node of a workflow spec say "credential": NAME where the
// API says "credentialId": ID. canvasd import maps each name to the
// target workspace's credential of that name, and stops with an error
// naming a credential the workspace does not have, or a file that names a
// credential by id.
package promptfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// FormatVersion is written in every file; Read refuses other versions.
const FormatVersion = 1

// CredentialKey is the key of a configuration, a fallback or an llm node's
// config that names a credential by its name, where the API's
// credentialId holds its id.
const CredentialKey = "credential"

// Canvas is one file: a canvas, its live versions (oldest first) and its
// environments (production first, then by name).
type Canvas struct {
	FormatVersion        int      `json:"formatVersion"`
	ID                   string   `json:"id"`
	Title                string   `json:"title"`
	Project              string   `json:"project"`
	CustomTags           []string `json:"customTags"`
	LayoutVersion        string   `json:"layoutVersion"`
	InferencesPercentage string   `json:"inferencesPercentage"`
	// AllowedCredentials are credential names (see CredentialKey).
	AllowedCredentials []string      `json:"allowedCredentials"`
	Versions           []Version     `json:"versions"`
	Environments       []Environment `json:"environments"`
}

// Version is one version of a canvas, with its messages by index.
type Version struct {
	ID            string             `json:"id"`
	Title         string             `json:"title"`
	Draft         bool               `json:"draft"`
	Configuration wire.Configuration `json:"configuration"`
	Variables     []wire.Variable    `json:"variables"`
	IsWorkflow    bool               `json:"isWorkflow"`
	WorkflowSpec  json.RawMessage    `json:"workflowSpec,omitempty"`
	Messages      []Message          `json:"messages"`
}

// Message is one message of a version.
type Message struct {
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent,omitempty"`
	Index           int     `json:"index"`
}

// Environment names an environment and the version it serves ("" when it
// serves nothing). An environment that serves a split has Split, its
// entries in order, each naming a version of the file; VersionID is then
// the first entry's, as a publication's is (and what Served returns).
type Environment struct {
	Name      string            `json:"name"`
	VersionID string            `json:"versionId"`
	Split     []wire.SplitEntry `json:"split,omitempty"`
}

// Version returns the version with the id, or nil.
func (c *Canvas) Version(id string) *Version {
	for i := range c.Versions {
		if c.Versions[i].ID == id {
			return &c.Versions[i]
		}
	}
	return nil
}

// Served returns the version the named environment serves, or nil; of a
// split, its first entry's.
func (c *Canvas) Served(envName string) *Version {
	for _, e := range c.Environments {
		if e.Name == envName && e.VersionID != "" {
			return c.Version(e.VersionID)
		}
	}
	return nil
}

// CanvasVersion returns v as the version a server would serve for it,
// without what the file does not keep (timestamps, authors, position).
func (c *Canvas) CanvasVersion(v *Version) *wire.Version {
	out := &wire.Version{
		ID: v.ID, PromptID: c.ID, Title: v.Title, Configuration: v.Configuration,
		Variables: slices.Clone(v.Variables), Draft: v.Draft, IsWorkflow: v.IsWorkflow,
		WorkflowSpec: v.WorkflowSpec, PromptCustomTags: slices.Clone(c.CustomTags),
	}
	if out.Variables == nil {
		out.Variables = []wire.Variable{}
	}
	for _, m := range v.Messages {
		out.Messages = append(out.Messages, wire.Message{PromptVersionID: v.ID, Role: m.Role,
			Content: m.Content, MarkdownContent: m.MarkdownContent, Index: m.Index})
	}
	if p := out.Prompt(); p != nil {
		content := p.Content
		out.Content, out.MarkdownContent = &content, p.MarkdownContent
		msg := *p
		out.Message = &msg
	}
	return out
}

// Encode returns the file's bytes: indented JSON, HTML escaping off, a
// newline at the end.
func Encode(c *Canvas) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// FileName is the file a canvas is written to: its title as a slug and the
// start of its id, so that names are readable, stable and unique.
func FileName(c *Canvas) string {
	slug := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(c.Title), "-"), "-")
	if len(slug) > 60 {
		slug = strings.Trim(slug[:60], "-")
	}
	id := c.ID
	if len(id) > 8 {
		id = id[:8]
	}
	if slug == "" {
		return id + ".json"
	}
	return slug + "-" + id + ".json"
}

// ReadDir reads every *.json file of dir, ordered by file name.
func ReadDir(dir string) ([]*Canvas, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*Canvas
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var c Canvas
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if c.FormatVersion != FormatVersion {
			return nil, fmt.Errorf("%s: format version %d is not %d", name, c.FormatVersion, FormatVersion)
		}
		if c.ID == "" {
			return nil, fmt.Errorf("%s: no canvas id", name)
		}
		out = append(out, &c)
	}
	return out, nil
}
