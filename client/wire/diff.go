package wire

import "encoding/json"

// Kinds of a difference of VersionDiff.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// VersionDiff is the answer of GET /prompt-version/{id}/diff?against=:
// what changes from the version AgainstID (before) to VersionID (after).
type VersionDiff struct {
	VersionID     string          `json:"versionId"`
	AgainstID     string          `json:"againstId"`
	Identical     bool            `json:"identical"`
	Messages      []MessageChange `json:"messages"`
	Variables     []VariableDiff  `json:"variables"`
	Configuration []ValueChange   `json:"configuration"`
}

// MessageChange is a message added, removed or changed at position Index
// of the versions' ordered messages.
type MessageChange struct {
	Index  int            `json:"index"`
	Change string         `json:"change"`
	Before *MessageFields `json:"before"`
	After  *MessageFields `json:"after"`
}

// MessageFields are what a message says.
type MessageFields struct {
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent"`
	Index           int     `json:"index"`
}

// VariableDiff is a variable added, removed or changed, by name.
type VariableDiff struct {
	Name   string    `json:"name"`
	Change string    `json:"change"`
	Before *Variable `json:"before"`
	After  *Variable `json:"after"`
}

// ValueChange is a configuration value added, removed or changed at Path,
// a JSON pointer into the configuration.
type ValueChange struct {
	Path   string          `json:"path"`
	Change string          `json:"change"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}
