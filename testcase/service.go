package testcase

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Options wire a Service. Store and Canvases are required.
type Options struct {
	// Store keeps test cases and tags.
	Store Store
	// Canvases reads the canvases test cases and tags belong to.
	Canvases canvas.Store
	// Generations lists the generations of test cases when a list asks for
	// them; nil lists none.
	Generations GenerationLister
}

// Service manages test cases and their tags, the in-process API that the
// server and embedders call. Every method reads the Principal from its
// context and authorizes it: viewers read, editors write. A test case or
// tag inherits the access of its canvas (canvas.ReachableCanvas): a canvas
// of a project the principal cannot access is FORBIDDEN, one of another
// workspace or someone else's personal draft is NOT_FOUND. Inputs are
// validated before the Store is touched, and a VALIDATION error lists every
// problem with a JSON pointer into the request ("/json/title").
type Service struct {
	store       Store
	canvases    canvas.Store
	generations GenerationLister
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	return &Service{store: opts.Store, canvases: opts.Canvases, generations: opts.Generations}
}

// canvas returns a live canvas the principal may reach.
func (s *Service) canvas(ctx context.Context, p *canvas.Principal, id string) (*canvas.Canvas, error) {
	return canvas.ReachableCanvas(ctx, s.canvases, p, id)
}

// canvasChecker checks each canvas once for a principal, so that a list or
// bulk call over many rows of one canvas reads it once.
type canvasChecker struct {
	s    *Service
	p    *canvas.Principal
	seen map[string]error
}

func (s *Service) checker(p *canvas.Principal) *canvasChecker {
	return &canvasChecker{s: s, p: p, seen: map[string]error{}}
}

// check returns the error of reaching canvas id, remembered per id.
func (c *canvasChecker) check(ctx context.Context, id string) error {
	if err, ok := c.seen[id]; ok {
		return err
	}
	_, err := c.s.canvas(ctx, c.p, id)
	c.seen[id] = err
	return err
}

// testCase returns a live test case whose canvas the principal may reach.
func (s *Service) testCase(ctx context.Context, p *canvas.Principal, id string) (*TestCase, error) {
	tc, err := s.store.GetTestCase(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, tc.PromptID); err != nil {
		return nil, err
	}
	return tc, nil
}

// tag returns a live tag whose canvas the principal may reach.
func (s *Service) tag(ctx context.Context, p *canvas.Principal, id string) (*Tag, error) {
	t, err := s.store.GetTag(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, t.PromptID); err != nil {
		return nil, err
	}
	return t, nil
}
