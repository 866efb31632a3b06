package canvas

import "time"

// DefaultWorkspaceName names the first workspace of a new database.
const DefaultWorkspaceName = "default"

// Workspace is the unit of tenancy: every resource belongs to exactly one,
// and nothing of one workspace is visible from another.
type Workspace struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Project groups canvases inside a workspace; API keys and JWTs may be
// restricted to some projects.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspaceId"`
	CreatedAt   time.Time `json:"createdAt"`
}

// APIKey is a UUID-form bearer token. Only the SHA-256 hash of the token is
// stored; the token itself is shown once, when the key is created.
type APIKey struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspaceId"`
	// Name tells keys apart for people ("ci", "Ada's laptop"); empty when
	// the key was made without one. Pages that show who did something show
	// it in place of the key's id.
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Projects restricts the key to these projects; nil means all.
	Projects  []string   `json:"projects"`
	Hash      string     `json:"-"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}
