package credential

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/model"
)

// Credential is a workspace's key to one model vendor, as every answer
// shows it: never the key, only a hint of it.
type Credential struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspaceId"`
	Name        string `json:"name"`
	// Provider is one of canvas.Providers.
	Provider string `json:"provider"`
	// BaseURL replaces the vendor's default API root, or is nil.
	BaseURL *string `json:"baseUrl"`
	// ProjectIDs limits the credential to these projects of the
	// workspace; nil means every project.
	ProjectIDs []string       `json:"projectIds"`
	Settings   model.Settings `json:"settings"`
	// KeyHint is "…" and the key's last four characters (only "…" for a
	// key shorter than MinHintedKey), or nil when the credential has no
	// key (an openai-compatible endpoint that needs none).
	KeyHint    *string    `json:"keyHint"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	CreatedBy  string     `json:"createdBy"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// Record is a credential as the store keeps it: the public view, the
// sealed key (nil when there is none), and the deletion.
type Record struct {
	Credential
	Sealed    *Sealed
	UpdatedBy string
	DeletedAt *time.Time
}

// Store is the persistence of credentials and of a workspace's model price
// overrides. Implementations set timestamps from one clock reading per
// transaction and scope every read and write to a workspace: a credential
// of another workspace, or a deleted one, is NOT_FOUND.
type Store interface {
	// CreateCredential inserts r, whose ID is set; a live credential of
	// the workspace with the same name is CONFLICT.
	CreateCredential(ctx context.Context, r *Record) error
	// GetCredential returns a live credential of the workspace.
	GetCredential(ctx context.Context, workspaceID, id string) (*Record, error)
	// ListCredentials returns one page of the workspace's live
	// credentials that p selects, oldest first, and how many it selects in
	// all.
	ListCredentials(ctx context.Context, p ListParams) ([]*Record, int, error)
	// UpdateCredential applies upd to a live credential and returns it; a
	// new name taken by another live credential is CONFLICT.
	UpdateCredential(ctx context.Context, workspaceID, id string, upd Update) (*Record, error)
	// DeleteCredential marks a live credential deleted and forgets its
	// sealed key.
	DeleteCredential(ctx context.Context, workspaceID, id, by string) error
	// TouchCredential sets a live credential's LastUsedAt to at unless it
	// is later already; it changes nothing else (not UpdatedAt).
	TouchCredential(ctx context.Context, workspaceID, id string, at time.Time) error
	// SealedCredentials returns, across every workspace, at most limit
	// live credentials with a key sealed under another key than keyID,
	// with ids after afterID, by id: the work of a key rotation.
	SealedCredentials(ctx context.Context, keyID, afterID string, limit int) ([]*Record, error)
	// ResealCredential replaces a credential's sealed key old by new,
	// unless it changed since it was read (then it does nothing and
	// reports false).
	ResealCredential(ctx context.Context, workspaceID, id string, old, new Sealed) (bool, error)

	// ListModelPrices returns the workspace's price overrides, by name.
	ListModelPrices(ctx context.Context, workspaceID string) ([]*PriceOverride, error)
	// SetModelPrice creates or replaces the override p.Name of p's
	// workspace.
	SetModelPrice(ctx context.Context, p *PriceOverride) error
	// DeleteModelPrice removes an override; none of that name is
	// NOT_FOUND.
	DeleteModelPrice(ctx context.Context, workspaceID, name string) error
}

// ListParams select credentials of a workspace.
type ListParams struct {
	WorkspaceID string
	// Provider, when set, keeps the credentials of that provider.
	Provider string
	// ProjectID, when set, keeps the credentials that project may use
	// (every project, or a list holding it).
	ProjectID string
	// Visible, when not nil, keeps the credentials of every project and
	// those whose projects meet these: what a principal limited to them
	// sees.
	Visible []string
	Limit   int
	Offset  int
}

// Update is a partial update of a credential: nil fields keep their value.
// A field that may be cleared is a pointer to a pointer (or to a nil
// slice).
type Update struct {
	Name       *string
	BaseURL    **string
	ProjectIDs *[]string
	Settings   *model.Settings
	// Sealed and KeyHint, set together, replace the key; ClearKey
	// removes it (and its hint).
	Sealed    *Sealed
	KeyHint   *string
	ClearKey  bool
	UpdatedBy string
}

// PriceOverride is a workspace's price of a model, which wins over the
// bundled catalogue's.
type PriceOverride struct {
	WorkspaceID string
	model.Price
	UpdatedAt time.Time
	UpdatedBy string
}
