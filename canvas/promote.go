package canvas

import "context"

// Promoter publishes a version to production, the way every other publish
// goes (with its notification): env.Service implements it.
type Promoter interface {
	PromoteVersion(ctx context.Context, canvasID, versionID string) error
}
