package wire

import "time"

// ResourcePrompt is the resourceType of a canvas' environments.
const ResourcePrompt = "prompt"

// Production is the name of every canvas' system environment.
const Production = "production"

// Environment is a named pointer at the version a canvas serves.
type Environment struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	IsSystem     bool      `json:"isSystem"`
	ResourceType string    `json:"resourceType"`
	ResourceID   string    `json:"resourceId"`
	WorkspaceID  string    `json:"workspaceId"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
	// ActiveVersionID is the version the environment serves, or null.
	ActiveVersionID *string `json:"activeVersionId"`
	// Protected environments are published to only through publication
	// requests that RequiredApprovals other people approve.
	Protected          bool                `json:"protected"`
	RequiredApprovals  int                 `json:"requiredApprovals"`
	RequiredExperiment *RequiredExperiment `json:"requiredExperiment"`
}

// RequiredExperiment is what a version must have passed before a request
// to publish it to a protected environment may be approved: a completed
// experiment over test cases of every tag of TagIDs whose pass rate for
// the version is at least MinPassRate.
type RequiredExperiment struct {
	TagIDs      []string `json:"tagIds"`
	MinPassRate float64  `json:"minPassRate"`
}

// EnvironmentPolicyRequest is the body of PATCH /environment/{id}: the
// whole protection of the environment. Protected false clears it.
type EnvironmentPolicyRequest struct {
	Protected          bool                `json:"protected"`
	RequiredApprovals  int                 `json:"requiredApprovals,omitempty"`
	RequiredExperiment *RequiredExperiment `json:"requiredExperiment,omitempty"`
}

// CreateEnvironmentRequest is the body of POST /environment.
type CreateEnvironmentRequest struct {
	ResourceType string `json:"resourceType"`
	ResourceID   string `json:"resourceId"`
	Name         string `json:"name"`
}

// PublishRequest is the body of POST /environment/publish.
type PublishRequest struct {
	ResourceType string `json:"resourceType"`
	ResourceID   string `json:"resourceId"`
	EnvName      string `json:"envName"`
	VersionID    string `json:"versionId"`
}

// Publication is one publish of a version to an environment, with the
// version's fields as they are now.
type Publication struct {
	PublicationID       string     `json:"publicationId"`
	EnvironmentID       string     `json:"environmentId"`
	EnvironmentName     string     `json:"environmentName"`
	EnvironmentIsSystem bool       `json:"environmentIsSystem"`
	VersionID           string     `json:"versionId"`
	PromptID            string     `json:"promptId"`
	Title               string     `json:"title"`
	Promoted            *bool      `json:"promoted"`
	Draft               *bool      `json:"draft"`
	OriginVersionID     *string    `json:"originVersionId"`
	VersionIndex        int        `json:"versionIndex"`
	CreatedBy           string     `json:"createdBy"`
	UpdatedBy           string     `json:"updatedBy"`
	CreatedAt           *time.Time `json:"createdAt"`
	UpdatedAt           *time.Time `json:"updatedAt"`
	PublishedAt         time.Time  `json:"publishedAt"`
	PublishedBy         string     `json:"publishedBy"`
	UnpublishedAt       *time.Time `json:"unpublishedAt"`
	IsActive            bool       `json:"isActive"`
}

// WatchVersionEvent is the data of a "version" event of GET
// /environment/watch: what the environment serves now.
type WatchVersionEvent struct {
	EnvName       string `json:"envName"`
	ETag          string `json:"etag"`
	PublicationID string `json:"publicationId,omitempty"`
	VersionID     string `json:"versionId"`
}

// WatchGoneEvent is the data of a "gone" event of GET /environment/watch:
// the environment or its canvas no longer exists.
type WatchGoneEvent struct {
	EnvName string `json:"envName"`
	Code    string `json:"code"`
	Message string `json:"message"`
}
