package canvas

import (
	"encoding/json"
	"time"
)

// Layout versions of the canvas editor.
const (
	LayoutV1 = "v1"
	LayoutV2 = "v2"
)

// MaxTitleLength bounds canvas and version titles, in characters.
const MaxTitleLength = 256

// Canvas (also called a prompt) holds an ordered history of versions.
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

	// Favorited is set only for a principal with a user identity; it is
	// omitted otherwise.
	Favorited *bool `json:"favorited,omitempty"`

	// Versions holds the promoted and latest versions when the caller asked
	// for them; when nil, neither field is written.
	Versions *CanvasVersions `json:"-"`
}

// CanvasVersions are the versions a canvas list includes on request. Either
// may be nil: no promoted version, or no version at all.
type CanvasVersions struct {
	Promoted *Version
	Latest   *Version
}

// MarshalJSON writes promotedVersion and latestVersion (possibly null) only
// when Versions is set.
func (c Canvas) MarshalJSON() ([]byte, error) {
	type plain Canvas
	if c.Versions == nil {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		PromotedVersion *Version `json:"promotedVersion"`
		LatestVersion   *Version `json:"latestVersion"`
	}{plain(c), c.Versions.Promoted, c.Versions.Latest})
}

// CanvasFilter selects canvases for List. Results are always scoped to the
// principal's workspace.
type CanvasFilter struct {
	WorkspaceID string
	// ProjectID restricts to one project.
	ProjectID *string
	// DraftsOnly returns only the caller's personal drafts (projectId null).
	DraftsOnly bool
	// IncludeVersions fills Canvas.Versions.
	IncludeVersions bool
	// Projects restricts to these projects (nil: all); personal drafts of
	// OwnerID are always included.
	Projects []string
	// OwnerID is the user whose personal drafts are visible; "" means none.
	OwnerID string
	// UserID fills Canvas.Favorited when set.
	UserID string
}

// CanvasUpdate holds the fields of a partial canvas update; nil fields are
// left as they are.
type CanvasUpdate struct {
	Title                *string
	ProjectID            **string
	InferencesPercentage *string
	LayoutVersion        *string
	CustomTags           *[]string
	AllowedCredentials   *[]string
	// AllowedCredentialsNull sets allowedCredentials to null (unrestricted).
	AllowedCredentialsNull bool
	Favorited              *bool
}
