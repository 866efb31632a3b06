package testcase

import "time"

// Tag labels test cases of one canvas. A tag and a test case of different
// canvases are never joined. Tags are soft-deleted: deleting one removes its
// assignments, and it vanishes from lists and reads as NOT_FOUND.
type Tag struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Color    string `json:"color"`
	PromptID string `json:"promptId"`
	// AgentID is set instead of PromptID for agent tags, which this service
	// does not create: it is always nil here.
	AgentID     *string    `json:"agentId"`
	WorkspaceID string     `json:"workspaceId"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	DeletedAt   *time.Time `json:"deletedAt"`
}

// TagUpdate is a partial update of a tag: nil fields are left alone.
type TagUpdate struct {
	Name  *string `json:"name"`
	Color *string `json:"color"`
	// PromptID moves the tag to another canvas of the workspace; a tag
	// still assigned to test cases cannot move (CONFLICT).
	PromptID *string `json:"promptId"`
}

// BulkAddResult counts what a bulk tagging call did: Added pairs were not
// assigned and now are, Skipped pairs already were.
type BulkAddResult struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"`
}

// BulkRemoveResult counts what a bulk untagging call did: Removed pairs
// were assigned and no longer are, Skipped pairs were not assigned.
type BulkRemoveResult struct {
	Removed int `json:"removed"`
	Skipped int `json:"skipped"`
}
