package canvas

import "context"

// AuthStore is the part of Store that authenticating a caller reads: the
// API key a token's hash names, and the workspace a signed token names.
// The authentication of a request runs before there is a Principal, so it
// reads these records directly rather than through the Service, whose
// methods act for the Principal in their context.
type AuthStore interface {
	// GetAPIKeyByHash returns the key with that hash, revoked or not.
	GetAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// GetWorkspace returns the workspace with that id.
	GetWorkspace(ctx context.Context, id string) (*Workspace, error)
}

var _ AuthStore = Store(nil)
