package wire

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

// Variable types.
const (
	VariableText    = "text"
	VariableNumber  = "number"
	VariableBoolean = "boolean"
	VariableJSON    = "json"
	VariableFile    = "file"
)

// Project groups canvases inside a workspace (POST and GET /projects).
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspaceId"`
	CreatedAt   time.Time `json:"createdAt"`
}

// CreateProjectRequest is the body of POST /projects.
type CreateProjectRequest struct {
	Name string `json:"name"`
}

// Canvas (a prompt, in the API's paths) holds an ordered history of
// versions (GET /prompt/{id}).
type Canvas struct {
	ID                   string     `json:"id"`
	Title                string     `json:"title"`
	ProjectID            *string    `json:"projectId"`
	InferencesPercentage string     `json:"inferencesPercentage"`
	LayoutVersion        string     `json:"layoutVersion"`
	WorkspaceID          string     `json:"workspaceId"`
	CustomTags           []string   `json:"customTags"`
	AllowedCredentials   []string   `json:"allowedCredentials"`
	CreatedBy            string     `json:"createdBy"`
	UpdatedBy            string     `json:"updatedBy"`
	DeletedBy            *string    `json:"deletedBy"`
	CreatedAt            time.Time  `json:"createdAt"`
	UpdatedAt            time.Time  `json:"updatedAt"`
	DeletedAt            *time.Time `json:"deletedAt"`
	// Favorited is present only for a caller with a user identity.
	Favorited *bool `json:"favorited,omitempty"`
	// PromotedVersion and LatestVersion are present in a list asked for
	// includePromotedVersion; either may be null.
	PromotedVersion *Version `json:"promotedVersion,omitempty"`
	LatestVersion   *Version `json:"latestVersion,omitempty"`
}

// CreateCanvasParams is the body of POST /prompt. Empty fields take the
// server's defaults.
type CreateCanvasParams struct {
	Title                string   `json:"title,omitempty"`
	ProjectID            *string  `json:"projectId,omitempty"`
	CustomTags           []string `json:"customTags,omitempty"`
	LayoutVersion        string   `json:"layoutVersion,omitempty"`
	InferencesPercentage string   `json:"inferencesPercentage,omitempty"`
	AllowedCredentials   []string `json:"allowedCredentials,omitempty"`
}

// Version is one version of a canvas (GET /prompt-version/{id}). Content,
// MarkdownContent and Message are the version's prompt: its system message
// at index 0.
type Version struct {
	ID               string          `json:"id"`
	PromptID         string          `json:"promptId"`
	Title            string          `json:"title"`
	TitleLocked      bool            `json:"titleLocked"`
	Content          *string         `json:"content"`
	MarkdownContent  *string         `json:"markdownContent"`
	Configuration    Configuration   `json:"configuration"`
	Variables        []Variable      `json:"variables"`
	Promoted         bool            `json:"promoted"`
	Draft            bool            `json:"draft"`
	OriginVersionID  *string         `json:"originVersionId"`
	WorkspaceID      string          `json:"workspaceId"`
	WorkflowSpec     json.RawMessage `json:"workflowSpec"`
	Graph            json.RawMessage `json:"graph"`
	IsWorkflow       bool            `json:"isWorkflow"`
	CreatedBy        string          `json:"createdBy"`
	UpdatedBy        string          `json:"updatedBy"`
	DeletedBy        *string         `json:"deletedBy"`
	CreatedAt        time.Time       `json:"createdAt"`
	UpdatedAt        time.Time       `json:"updatedAt"`
	DeletedAt        *time.Time      `json:"deletedAt"`
	VersionIndex     int             `json:"versionIndex,omitempty"`
	PromptCustomTags []string        `json:"promptCustomTags"`
	Message          *Message        `json:"message"`
	Messages         []Message       `json:"messages"`
	// ResolvedMessages and Includes are sent by a resolved read of an
	// environment (GET /environment/version?resolve=true): the live
	// messages with their includes replaced, and what each include
	// resolved to.
	ResolvedMessages []ResolvedMessage `json:"resolvedMessages,omitempty"`
	Includes         []Include         `json:"includes,omitempty"`
}

// Include is what one include ({{> CANVAS_ID}}, {{> CANVAS_ID@ENV}},
// {{> CANVAS_ID@vN}}) resolved to.
type Include struct {
	CanvasID     string `json:"canvasId"`
	Environment  string `json:"environment,omitempty"`
	VersionID    string `json:"versionId"`
	VersionIndex int    `json:"versionIndex,omitempty"`
}

// ResolvedMessage is a message with its includes replaced.
type ResolvedMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Index   int    `json:"index"`
}

// Dependent is an include of a canvas by a live version of another
// (GET /prompt/{id}/dependents).
type Dependent struct {
	CanvasID             string `json:"canvasId"`
	VersionID            string `json:"versionId"`
	VersionIndex         int    `json:"versionIndex"`
	Environment          string `json:"environment,omitempty"`
	IncludedVersionIndex int    `json:"includedVersionIndex,omitempty"`
}

// Prompt returns the version's system message at index 0, or nil.
func (v *Version) Prompt() *Message {
	for i := range v.Messages {
		if m := &v.Messages[i]; m.Index == 0 && m.Role == RoleSystem {
			return m
		}
	}
	return nil
}

// Message is one message of a version.
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

// Variable is a template variable a version declares.
type Variable struct {
	Name              string            `json:"name"`
	Type              string            `json:"type"`
	Required          bool              `json:"required"`
	Description       string            `json:"description"`
	ProcessingOptions ProcessingOptions `json:"processingOptions"`
}

// ProcessingOptions say how a variable's value reaches the model.
type ProcessingOptions struct {
	AllowMultimodal bool `json:"allowMultimodal"`
}

// Configuration is a version's model configuration. The keys the server
// does not interpret are kept in Extra and written back as they came.
type Configuration struct {
	Model            string            `json:"model,omitempty"`
	Type             string            `json:"type,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
	// Provider names the vendor serving Model when its name does not
	// say it; CredentialID the credential to run on.
	Provider     string `json:"provider,omitempty"`
	CredentialID string `json:"credentialId,omitempty"`
	// Functions are the tools the model may call; ToolChoice is "auto",
	// "none", "required" (JSON strings) or {"name": ...}.
	Functions  []Function      `json:"functions,omitempty"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
	// Fallbacks are tried in order when the model fails with a retryable
	// error.
	Fallbacks []Fallback                 `json:"fallbacks,omitempty"`
	Extra     map[string]json.RawMessage `json:"-"`
}

// Fallback is a model tried when the version's fails with a retryable
// error, on a credential or resolved as the version's model is.
type Fallback struct {
	Model        string `json:"model"`
	CredentialID string `json:"credentialId,omitempty"`
	// Credential names the credential instead of CredentialID in a
	// prompt file (package promptfile), which carries names, never ids;
	// the API never reads or writes it.
	Credential string `json:"credential,omitempty"`
}

// StructuredOutput asks the model for JSON that the schema accepts.
type StructuredOutput struct {
	Enabled bool            `json:"enabled"`
	Schema  json.RawMessage `json:"schema,omitempty"`
}

// configurationKeys are the keys Configuration has fields for.
var configurationKeys = map[string]bool{
	"model": true, "type": true, "temperature": true, "maxTokens": true, "topP": true, "structuredOutput": true,
	"provider": true, "credentialId": true, "functions": true, "toolChoice": true, "fallbacks": true,
}

// MarshalJSON writes the known keys and every extra key as one object.
func (c Configuration) MarshalJSON() ([]byte, error) {
	type known Configuration
	b, err := json.Marshal(known(c))
	emptyFunctions := c.Functions != nil && len(c.Functions) == 0
	if err != nil || (len(c.Extra) == 0 && !emptyFunctions) {
		return b, err
	}
	m := make(map[string]json.RawMessage, len(c.Extra)+6)
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		if !configurationKeys[k] {
			m[k] = v
		}
	}
	if emptyFunctions {
		m["functions"] = json.RawMessage("[]")
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the known keys into their fields and keeps the rest in
// Extra.
func (c *Configuration) UnmarshalJSON(b []byte) error {
	type known Configuration
	var k known
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for key, v := range m {
		if !configurationKeys[key] {
			if k.Extra == nil {
				k.Extra = make(map[string]json.RawMessage)
			}
			k.Extra[key] = v
		}
	}
	*c = Configuration(k)
	return nil
}

// CreateVersionParams is the body of POST /prompt-version. Message, when
// set, is the version's first message.
type CreateVersionParams struct {
	PromptID        string          `json:"promptId"`
	Title           string          `json:"title,omitempty"`
	Configuration   *Configuration  `json:"configuration,omitempty"`
	Variables       []Variable      `json:"variables,omitempty"`
	Draft           bool            `json:"draft,omitempty"`
	OriginVersionID string          `json:"originVersionId,omitempty"`
	Message         *MessageInput   `json:"message,omitempty"`
	IsWorkflow      bool            `json:"isWorkflow,omitempty"`
	WorkflowSpec    json.RawMessage `json:"workflowSpec,omitempty"`
}

// MessageInput is a message given with a version.
type MessageInput struct {
	ID              string  `json:"id,omitempty"`
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent,omitempty"`
	Index           int     `json:"index"`
}

// CreateMessageParams is the body of POST /prompt-version-message.
type CreateMessageParams struct {
	ID              string  `json:"id,omitempty"`
	PromptVersionID string  `json:"promptVersionId"`
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent,omitempty"`
	Index           int     `json:"index"`
}
