package canvas

// Service is the canvas, version and message service. Its methods authorize
// the principal of the context, validate their input, and call the Store.
type Service struct {
	store Store
}

// NewService returns a Service over store.
func NewService(store Store) *Service {
	return &Service{store: store}
}
