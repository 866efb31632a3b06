package canvas

import "context"

// Promoter publishes a version to production, the way every other publish
// goes (with its notification): env.Service implements it.
type Promoter interface {
	PromoteVersion(ctx context.Context, canvasID, versionID string) error
}

// WithPromoter makes UpdateVersion's Promoted true publish through p, so
// that a promotion is a publication like any other and notifies what
// publications notify (publication.created). Without it, the store
// publishes in the update's own transaction.
func WithPromoter(p Promoter) ServiceOption {
	return func(s *Service) { s.promoter = p }
}
