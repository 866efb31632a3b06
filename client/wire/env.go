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

// PublishRequest is the body of POST /environment/publish: exactly one of
// VersionID and Split.
type PublishRequest struct {
	ResourceType string       `json:"resourceType"`
	ResourceID   string       `json:"resourceId"`
	EnvName      string       `json:"envName"`
	VersionID    string       `json:"versionId,omitempty"`
	Split        []SplitEntry `json:"split,omitempty"`
}

// SplitEntry is one version of a split publication and its weight, in
// percent: a split has 2 to 5 entries of distinct versions, weights 1..99
// summing to 100.
type SplitEntry struct {
	VersionID string `json:"versionId"`
	Weight    int    `json:"weight"`
}

// SplitStats is the answer of GET /environment/split-stats: the results
// of a publication's runs, per variant.
type SplitStats struct {
	PublicationID   string         `json:"publicationId"`
	EnvironmentName string         `json:"environmentName"`
	IsActive        bool           `json:"isActive"`
	Variants        []VariantStats `json:"variants"`
}

// VariantStats are the results of the runs one variant (entry of the
// split; 0 for a publication of one version) served. The latencies are
// nearest-rank percentiles of the completed runs, null when none
// completed; FeedbackMean is null when no run has feedback. Truncated says
// that the figures cover only the server's bound of the variant's runs.
type VariantStats struct {
	Variant       int      `json:"variant"`
	VersionID     string   `json:"versionId"`
	Weight        int      `json:"weight"`
	Runs          int      `json:"runs"`
	Errors        int      `json:"errors"`
	LatencyP50Ms  *int64   `json:"latencyP50Ms"`
	LatencyP95Ms  *int64   `json:"latencyP95Ms"`
	Cost          float64  `json:"cost"`
	Currency      string   `json:"currency"`
	FeedbackMean  *float64 `json:"feedbackMean"`
	FeedbackCount int      `json:"feedbackCount"`
	Truncated     bool     `json:"truncated"`
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
	// Split is the publication's split, whose first entry's version is
	// VersionID; nil for a publication of one version.
	Split []SplitEntry `json:"split,omitempty"`
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
