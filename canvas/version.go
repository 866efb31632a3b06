package canvas

import (
	"encoding/json"
	"time"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleFunction  = "function"
)

// ValidMessageRole reports whether role is one of the four message roles.
func ValidMessageRole(role string) bool {
	switch role {
	case RoleSystem, RoleUser, RoleAssistant, RoleFunction:
		return true
	}
	return false
}

// Variable types. The spec shows text and file; number, boolean and json
// complete the set so that a version can declare what it expects.
const (
	VariableText    = "text"
	VariableNumber  = "number"
	VariableBoolean = "boolean"
	VariableJSON    = "json"
	VariableFile    = "file"
)

// VariableTypes lists every allowed variable type.
var VariableTypes = []string{VariableText, VariableNumber, VariableBoolean, VariableJSON, VariableFile}

// Version is one entry of a canvas' ordered history: prompt content
// (messages with {{variable}} placeholders), variable definitions and model
// configuration, or a workflow.
type Version struct {
	ID              string          `json:"id"`
	PromptID        string          `json:"promptId"`
	Title           string          `json:"title"`
	TitleLocked     bool            `json:"titleLocked"`
	Content         *string         `json:"content"`
	MarkdownContent *string         `json:"markdownContent"`
	Configuration   Configuration   `json:"configuration"`
	Variables       []Variable      `json:"variables"`
	Promoted        bool            `json:"promoted"`
	Draft           bool            `json:"draft"`
	OriginVersionID *string         `json:"originVersionId"`
	WorkspaceID     string          `json:"workspaceId"`
	WorkflowSpec    json.RawMessage `json:"workflowSpec"`
	Graph           json.RawMessage `json:"graph"`
	IsWorkflow      bool            `json:"isWorkflow"`
	CreatedBy       string          `json:"createdBy"`
	UpdatedBy       string          `json:"updatedBy"`
	DeletedBy       *string         `json:"deletedBy"`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
	DeletedAt       *time.Time      `json:"deletedAt"`
	// VersionIndex is the 1-based position of the version in its canvas'
	// history. Positions are assigned at creation and never reused, so a
	// deleted version leaves a gap rather than renumbering the others.
	VersionIndex     int       `json:"versionIndex,omitempty"`
	PromptCustomTags []string  `json:"promptCustomTags"`
	Message          *Message  `json:"message"`
	Messages         []Message `json:"messages"`
}

// Prompt returns the version's prompt message: the system message at index
// 0, or nil when there is none.
func (v *Version) Prompt() *Message {
	for i := range v.Messages {
		if m := &v.Messages[i]; m.Index == 0 && m.Role == RoleSystem {
			return m
		}
	}
	return nil
}

// Message is one message of a version. The prompt itself is the system
// message at index 0; other roles are kept but not read as the prompt.
type Message struct {
	ID              string     `json:"id"`
	PromptVersionID string     `json:"promptVersionId"`
	Role            string     `json:"role"`
	Content         string     `json:"content"`
	MarkdownContent *string    `json:"markdownContent"`
	Index           int        `json:"index"`
	CreatedBy       string     `json:"createdBy"`
	UpdatedBy       string     `json:"updatedBy"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
	DeletedAt       *time.Time `json:"deletedAt"`
}

// Variable declares one variable a version's messages may use.
type Variable struct {
	Name              string            `json:"name"`
	Type              string            `json:"type"`
	Required          bool              `json:"required"`
	Description       string            `json:"description"`
	ProcessingOptions ProcessingOptions `json:"processingOptions"`
}

// ProcessingOptions tune how a variable's value reaches the model.
type ProcessingOptions struct {
	AllowMultimodal bool `json:"allowMultimodal"`
}

// VersionUpdate holds the fields of a partial version update; nil fields are
// left as they are.
type VersionUpdate struct {
	Title           *string
	Content         *string
	MarkdownContent *string
	// ConfigurationPatch is a JSON merge patch (RFC 7386) applied to the
	// stored configuration key by key.
	ConfigurationPatch json.RawMessage
	Variables          *[]Variable
	// Promoted true publishes the version to production; false withdraws it
	// from production when it is the promoted version.
	Promoted *bool
	Draft    *bool
	// Messages replaces every message of the version when set.
	Messages *[]MessageInput
}

// MessageInput is a message given on version create or update.
type MessageInput struct {
	ID              string  `json:"id,omitempty"`
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent,omitempty"`
	Index           int     `json:"index"`
}

// MessageUpdate holds the fields of a partial message update.
type MessageUpdate struct {
	Role            *string
	Content         *string
	MarkdownContent *string
	Index           *int
}
