package audit

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Page bounds of a list of events.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// Filter selects a workspace's events; empty members select everything.
// Since is inclusive, Until exclusive.
type Filter struct {
	WorkspaceID  string
	ResourceType string
	ResourceID   string
	// Actor is an actor's id (an API key's id or a user's sub).
	Actor        string
	Action       string
	Since, Until *time.Time
	Limit        int
	Offset       int
}

// Page is one page of events, newest first, and how many Filter selects in
// all.
type Page struct {
	Items  []*Event
	Total  int
	Limit  int
	Offset int
}

// Store reads the audit log. The store appends to it itself, in the
// transaction of each change.
type Store interface {
	// ListAuditEvents returns the page of f's events, newest first.
	ListAuditEvents(ctx context.Context, f Filter) ([]*Event, int, error)
	// AuditWorkspaces returns the ids of the workspaces that have events,
	// in order.
	AuditWorkspaces(ctx context.Context) ([]string, error)
	// ScanAuditEvents returns at most limit events of a workspace after
	// seq afterSeq, in the order of their seq.
	ScanAuditEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*Event, error)
}

// Service serves the audit log to the workspace's admins.
type Service struct {
	store Store
}

// NewService returns the audit log's service over store.
func NewService(store Store) *Service { return &Service{store: store} }

// List returns a page of the caller's workspace's events that f selects
// (its WorkspaceID is the caller's); it requires the admin role, without
// a project restriction.
func (s *Service) List(ctx context.Context, f Filter) (*Page, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if p.Projects != nil {
		return nil, canvas.Errorf(canvas.EFORBIDDEN, "The audit log holds every project's changes: "+
			"a key restricted to projects cannot read it.")
	}
	f.WorkspaceID = p.WorkspaceID
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	f.Limit = min(f.Limit, MaxLimit)
	f.Offset = max(f.Offset, 0)
	items, total, err := s.store.ListAuditEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	return &Page{Items: items, Total: total, Limit: f.Limit, Offset: f.Offset}, nil
}

// Walk calls fn with every event of every workspace (of workspaceID's
// alone when it is not empty), workspace by workspace, each in the order
// of its seq, reading batch events at a time. It needs no principal: it is
// for the operator's commands (verify, export).
func Walk(ctx context.Context, store Store, workspaceID string, batch int, fn func(*Event) error) error {
	workspaces := []string{workspaceID}
	if workspaceID == "" {
		var err error
		if workspaces, err = store.AuditWorkspaces(ctx); err != nil {
			return err
		}
	}
	for _, ws := range workspaces {
		var after int64
		for {
			events, err := store.ScanAuditEvents(ctx, ws, after, batch)
			if err != nil {
				return err
			}
			for _, e := range events {
				if err := fn(e); err != nil {
					return err
				}
				after = e.Seq
			}
			if len(events) < batch {
				break
			}
		}
	}
	return nil
}
