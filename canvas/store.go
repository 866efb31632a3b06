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
	// RevokeAPIKey sets RevokedAt; revoking a revoked key is a no-op.
	RevokeAPIKey(ctx context.Context, id string) error

	CreateCanvas(ctx context.Context, c *Canvas) error
	// GetCanvas returns a live canvas; Favorited is filled when userID is set.
	GetCanvas(ctx context.Context, workspaceID, id, userID string) (*Canvas, error)
	ListCanvases(ctx context.Context, f CanvasFilter) ([]*Canvas, error)
	UpdateCanvas(ctx context.Context, workspaceID, id string, upd CanvasUpdate, by, userID string) (*Canvas, error)
	// DeleteCanvas soft-deletes the canvas: it sets deletedAt and deletedBy,
	// and the canvas, its versions and their messages vanish from reads.
	DeleteCanvas(ctx context.Context, workspaceID, id, by string) error

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
	// UpdateVersion applies upd in one transaction. Content and
	// MarkdownContent write the prompt message (the system message at index
	// 0, created when missing); Promoted publishes the version to the
	// canvas' production environment, or withdraws it from there.
	UpdateVersion(ctx context.Context, workspaceID, id string, upd VersionUpdate, by string) (*Version, error)
	// DeleteVersion soft-deletes a version; a version that is the active
	// publication of any environment is CONFLICT.
	DeleteVersion(ctx context.Context, workspaceID, id, by string) error

	// CreateMessage inserts m into a live version.
	CreateMessage(ctx context.Context, workspaceID string, m *Message) error
	GetMessage(ctx context.Context, workspaceID, id string) (*Message, error)
	// ListMessages returns the live messages of a version ordered by index.
	ListMessages(ctx context.Context, workspaceID, versionID string) ([]*Message, error)
	UpdateMessage(ctx context.Context, workspaceID, id string, upd MessageUpdate, by string) (*Message, error)
	DeleteMessage(ctx context.Context, workspaceID, id string) error
}

// Clock returns the current time; stores and services take one so that tests
// can fix it.
type Clock func() time.Time
