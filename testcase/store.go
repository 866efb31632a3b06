package testcase

import (
	"context"
)

// Store is the persistence of test cases and tags. Implementations set ids
// (when empty) and timestamps from one clock reading per transaction, scope
// every read and write to a workspace (a row of another workspace is
// NOT_FOUND), and report soft-deleted rows as NOT_FOUND.
//
// Test cases a Store returns carry their live tags, ordered by name then id.
type Store interface {
	// CreateTestCase inserts tc; its canvas must be live.
	CreateTestCase(ctx context.Context, tc *TestCase) error
	// GetTestCase returns a live test case of a live canvas.
	GetTestCase(ctx context.Context, workspaceID, id string) (*TestCase, error)
	// ListTestCases returns the live test cases the filter selects, oldest
	// first (then by id).
	ListTestCases(ctx context.Context, f Filter) ([]*TestCase, error)
	// UpdateTestCase applies p.Update to a live test case, records p.By as
	// its updater, and returns it.
	UpdateTestCase(ctx context.Context, p UpdateTestCaseParams) (*TestCase, error)
	// DeleteTestCase soft-deletes a live test case.
	DeleteTestCase(ctx context.Context, workspaceID, id string) error

	// CreateTag inserts t; its canvas must be live.
	CreateTag(ctx context.Context, t *Tag) error
	// GetTag returns a live tag.
	GetTag(ctx context.Context, workspaceID, id string) (*Tag, error)
	// ListTags returns the live tags of the given ids, or of a canvas when
	// ids is empty, ordered by name then id. Ids that are unknown or
	// deleted are left out.
	ListTags(ctx context.Context, workspaceID, promptID string, ids []string) ([]*Tag, error)
	// UpdateTag applies upd to a live tag and returns it. Moving a tag that
	// is assigned to any live test case to another canvas is CONFLICT.
	UpdateTag(ctx context.Context, workspaceID, id string, upd TagUpdate) (*Tag, error)
	// DeleteTag soft-deletes a live tag and removes its assignments.
	DeleteTag(ctx context.Context, workspaceID, id string) error

	// AddTags assigns every tag to every test case in one transaction and
	// counts the pairs added and the pairs already assigned. Every id must
	// name a live row (else NOT_FOUND, and nothing is written), and each
	// pair must share its canvas (else VALIDATION). Ids are distinct.
	AddTags(ctx context.Context, workspaceID string, testCaseIDs, tagIDs []string) (BulkAddResult, error)
	// RemoveTags removes every tag from every test case in one transaction
	// and counts the pairs removed and the pairs that were not assigned.
	// Every id must name a live row (else NOT_FOUND). Ids are distinct.
	RemoveTags(ctx context.Context, workspaceID string, testCaseIDs, tagIDs []string) (BulkRemoveResult, error)
}

// UpdateTestCaseParams name a test case of a workspace, the change to apply
// and the actor By who applies it.
type UpdateTestCaseParams struct {
	WorkspaceID string
	ID          string
	Update      Update
	By          string
}

// Filter selects test cases. WorkspaceID is required; the other fields
// narrow the selection and combine with AND. An empty filter beyond the
// workspace selects nothing: at least one of PromptID, IDs or TagIDs is set.
type Filter struct {
	WorkspaceID string
	// PromptID keeps the test cases of one canvas.
	PromptID string
	// IDs keeps the test cases with these ids.
	IDs []string
	// TagIDs keeps the test cases assigned at least one of these tags.
	TagIDs []string
}

// Update is a partial update of a test case. A nil pointer leaves the field
// alone; for the nullable fields a pointer to nil (a nil slice or map)
// writes null.
type Update struct {
	Title                *string
	Messages             *[]Message
	Variables            *map[string]any
	VariablesRichContent *map[string]any
	Files                *[]File
	ExpectedOutput       **string
	Evaluator            **Evaluator
	Answers              *map[string]AnswerSet
	PromptApplicationID  **string
	Metadata             **Metadata
}
