package env

import "github.com/promptcanvas/promptcanvas/canvas"

// Service publishes versions to environments and reads their history.
type Service struct {
	store    Store
	canvases canvas.Store
}

// NewService returns a Service over the stores.
func NewService(store Store, canvases canvas.Store) *Service {
	return &Service{store: store, canvases: canvases}
}
