package canvas

import (
	"context"
	"time"
)

// Store is the persistence the canvas package consumes. Implementations set
// ids (when empty) and timestamps themselves, from one clock reading per
// transaction, and report missing or soft-deleted rows as NOT_FOUND and
// unique-constraint violations as CONFLICT.
//
// Every read and write is scoped to a workspace: a row of another workspace
// is NOT_FOUND.
type Store interface {
	IncluderStore

	// CreateWorkspace inserts w; a duplicate name is CONFLICT.
	CreateWorkspace(ctx context.Context, w *Workspace) error
	// GetWorkspace returns the workspace with that id.
	GetWorkspace(ctx context.Context, id string) (*Workspace, error)
	// GetWorkspaceByName returns the workspace with that name.
	GetWorkspaceByName(ctx context.Context, name string) (*Workspace, error)
	// ListWorkspaces returns every workspace, oldest first.
	ListWorkspaces(ctx context.Context) ([]*Workspace, error)

	CreateProject(ctx context.Context, p *Project) error
	GetProject(ctx context.Context, workspaceID, id string) (*Project, error)
	ListProjects(ctx context.Context, workspaceID string) ([]*Project, error)

	// CreateAPIKey inserts k, whose Hash is already set.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// GetAPIKeyByHash returns the key with that hash, revoked or not.
	GetAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// ListAPIKeys returns the keys of a workspace, or of every workspace when
	// workspaceID is empty, oldest first.
	ListAPIKeys(ctx context.Context, workspaceID string) ([]*APIKey, error)
	// PageAPIKeys returns the keys of a workspace from offset on, at most
	// limit of them, oldest first, and how many the workspace holds in all,
	// read in one snapshot.
	PageAPIKeys(ctx context.Context, workspaceID string, limit, offset int) ([]*APIKey, int, error)
	// GetAPIKey returns a key of the workspace, revoked or not; a key of
	// another workspace is NOT_FOUND.
	GetAPIKey(ctx context.Context, workspaceID, id string) (*APIKey, error)
	// RevokeAPIKey sets RevokedAt; revoking a revoked key is a no-op.
	RevokeAPIKey(ctx context.Context, id string) error

	CreateCanvas(ctx context.Context, c *Canvas) error
	// GetCanvas returns a live canvas; Favorited is filled when p.UserID is
	// set.
	GetCanvas(ctx context.Context, p GetCanvasParams) (*Canvas, error)
	ListCanvases(ctx context.Context, f CanvasFilter) ([]*Canvas, error)
	// UpdateCanvas applies p.Update to a live canvas, records p.By as its
	// updater, and returns it.
	UpdateCanvas(ctx context.Context, p UpdateCanvasParams) (*Canvas, error)
	// DeleteCanvas soft-deletes the canvas: it sets deletedAt and deletedBy,
	// and the canvas, its versions and their messages vanish from reads.
	DeleteCanvas(ctx context.Context, p DeleteCanvasParams) error

	// CreateVersion inserts v and v.Messages in one transaction and assigns
	// v.VersionIndex (the next position in the canvas history); an empty
	// Title becomes "Version N" for that position. The canvas must be live.
	CreateVersion(ctx context.Context, v *Version) error
	// GetVersion returns a live version of a live canvas, with its live
	// messages ordered by index, Message set to messages[0], Content and
	// MarkdownContent taken from the prompt message, Promoted, VersionIndex
	// and PromptCustomTags filled.
	GetVersion(ctx context.Context, workspaceID, id string) (*Version, error)
	// ListVersions returns the live versions of a canvas in history order,
	// filled as GetVersion fills them.
	ListVersions(ctx context.Context, workspaceID, canvasID string) ([]*Version, error)
	// UpdateVersion applies p.Update in one transaction. Content and
	// MarkdownContent write the prompt message (the system message at index
	// 0, created when missing); Promoted publishes the version to the
	// canvas' production environment, or withdraws it from there.
	UpdateVersion(ctx context.Context, p UpdateVersionParams) (*Version, error)
	// DeleteVersion soft-deletes a version; a version that is the active
	// publication of any environment is CONFLICT.
	DeleteVersion(ctx context.Context, p DeleteVersionParams) error

	// CreateMessage inserts m into a live version.
	CreateMessage(ctx context.Context, workspaceID string, m *Message) error
	GetMessage(ctx context.Context, workspaceID, id string) (*Message, error)
	// ListMessages returns the live messages of a version ordered by index.
	ListMessages(ctx context.Context, workspaceID, versionID string) ([]*Message, error)
	// UpdateMessage applies p.Update to a live message, records p.By as
	// its updater, and returns it.
	UpdateMessage(ctx context.Context, p UpdateMessageParams) (*Message, error)
	DeleteMessage(ctx context.Context, workspaceID, id string) error
}

// GetCanvasParams name a canvas of a workspace to read, for the user UserID
// (whose favorite it may be) or for no user when UserID is empty.
type GetCanvasParams struct {
	WorkspaceID string
	ID          string
	UserID      string
}

// UpdateCanvasParams name a canvas of a workspace, the change to apply, the
// actor By who applies it, and the user UserID whose favorite
// Update.Favorited sets or clears.
type UpdateCanvasParams struct {
	WorkspaceID string
	ID          string
	Update      CanvasUpdate
	By          string
	UserID      string
}

// DeleteCanvasParams name a canvas of a workspace to soft-delete and the
// actor By who deletes it.
type DeleteCanvasParams struct {
	WorkspaceID string
	ID          string
	By          string
}

// UpdateVersionParams name a version of a workspace, the change to apply
// and the actor By who applies it.
type UpdateVersionParams struct {
	WorkspaceID string
	ID          string
	Update      VersionUpdate
	By          string
}

// DeleteVersionParams name a version of a workspace to soft-delete and the
// actor By who deletes it.
type DeleteVersionParams struct {
	WorkspaceID string
	ID          string
	By          string
}

// UpdateMessageParams name a message of a workspace, the change to apply
// and the actor By who applies it.
type UpdateMessageParams struct {
	WorkspaceID string
	ID          string
	Update      MessageUpdate
	By          string
}

// Clock returns the current time; stores and services take one so that tests
// can fix it.
type Clock func() time.Time
