package env

import (
	"context"
	"slices"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// CreateRequest asks that a version, or a split of versions, be published
// to an environment of its canvas, and returns the pending request. It
// requires the editor role. Exactly one of VersionID and Split is given,
// checked as Publish checks them; the split's first entry is the
// request's VersionID. Any environment takes requests; a protected one is
// published to only through them.
func (s *Service) CreateRequest(ctx context.Context, in CreateRequestInput) (*PublicationRequest, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	name, err := CheckPublishName(in.EnvName)
	if err != nil {
		return nil, err
	}
	if err := checkTarget(in.VersionID, in.Split); err != nil {
		return nil, err
	}
	if err := checkComment("/json/comment", in.Comment); err != nil {
		return nil, err
	}
	versionID := in.VersionID
	if in.Split != nil {
		versionID = in.Split[0].VersionID
	}
	c, err := s.canvas(ctx, p, in.CanvasID)
	if err != nil {
		return nil, err
	}
	var wrote bool
	r, err := s.store.CreateRequest(ctx, CreateRequestParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID, EnvName: name,
		VersionID: versionID, Split: in.Split, Comment: in.Comment, By: p.Actor(), Event: s.requestEvent(c.WorkspaceID, &wrote)})
	if err != nil {
		return nil, err
	}
	s.wake(wrote)
	return r, nil
}

// GetRequest returns a publication request of a canvas the caller
// reaches. It requires the viewer role.
func (s *Service) GetRequest(ctx context.Context, id string) (*PublicationRequest, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.reachableRequest(ctx, p, id)
}

// ListRequests returns one page of the publication requests of the
// canvases the caller reaches, newest first. It requires the viewer role.
func (s *Service) ListRequests(ctx context.Context, params ListRequestsParams) (*RequestPage, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if params.Status != "" && !slices.Contains(RequestStatuses, params.Status) {
		return nil, canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/query/status",
			Message: "must be one of " + strings.Join(RequestStatuses, ", ")})
	}
	if params.CanvasID != "" {
		if _, err := s.canvas(ctx, p, params.CanvasID); err != nil {
			return nil, err
		}
	}
	limit, offset := ClampLimit(params.Limit), max(params.Offset, 0)
	items, total, err := s.store.ListRequests(ctx, RequestQuery{WorkspaceID: p.WorkspaceID, CanvasID: params.CanvasID,
		Status: params.Status, Projects: p.Projects, UserID: p.UserID, Limit: limit, Offset: offset})
	if err != nil {
		return nil, err
	}
	return &RequestPage{Items: items, Total: total, Limit: limit, Offset: offset}, nil
}

// ApproveRequest records the caller's approval of a pending request. The
// approver is a principal (an API key, a JWT's subject) other than the
// requester and every earlier approver, with the editor role; the approval
// that reaches the environment's required approvals publishes the version
// in the same transaction, and the request is then published. See
// Store.DecideRequest for what is refused.
func (s *Service) ApproveRequest(ctx context.Context, id, comment string) (*PublicationRequest, error) {
	return s.decide(ctx, id, DecisionApprove, comment)
}

// RejectRequest rejects a pending request: anyone with the editor role
// but its requester.
func (s *Service) RejectRequest(ctx context.Context, id, comment string) (*PublicationRequest, error) {
	return s.decide(ctx, id, DecisionReject, comment)
}

// WithdrawRequest withdraws a pending request: its requester only.
func (s *Service) WithdrawRequest(ctx context.Context, id, comment string) (*PublicationRequest, error) {
	return s.decide(ctx, id, DecisionWithdraw, comment)
}

// decide applies a decision for the caller, then does what a publish does
// after its commit when the decision published.
func (s *Service) decide(ctx context.Context, id, decision, comment string) (*PublicationRequest, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if err := checkComment("/json/comment", comment); err != nil {
		return nil, err
	}
	if _, err := s.reachableRequest(ctx, p, id); err != nil {
		return nil, err
	}
	var wrote, wrotePub bool
	params := DecideParams{WorkspaceID: p.WorkspaceID, ID: id, Decision: decision, Comment: comment, By: p.Actor(),
		Event: s.requestEvent(p.WorkspaceID, &wrote)}
	if ev := s.event; ev != nil {
		params.Publish = &PublishEvent{Type: ev.Type, Job: func(pub *Publication) (*queue.Job, error) {
			j, err := ev.Job(p.WorkspaceID, pub)
			wrotePub = j != nil
			return j, err
		}}
	}
	r, pub, err := s.store.DecideRequest(ctx, params)
	if err != nil {
		return nil, err
	}
	s.wake(wrote || wrotePub)
	if pub != nil {
		s.changes.notify()
		if s.published != nil {
			s.published(ctx, p.WorkspaceID, pub)
		}
	}
	return r, nil
}

// reachableRequest returns a request of a canvas p reaches; a request of a
// canvas p may not see is NOT_FOUND.
func (s *Service) reachableRequest(ctx context.Context, p *canvas.Principal, id string) (*PublicationRequest, error) {
	r, err := s.store.GetRequest(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, r.ResourceID); err != nil {
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return nil, canvas.NotFound("publication request")
		}
		return nil, err
	}
	return r, nil
}

// requestEvent returns the events of a request's steps in workspaceID, or
// nil when the Service sends none; *wrote is set when a job was built.
func (s *Service) requestEvent(workspaceID string, wrote *bool) func(step string) *RequestEvent {
	evs := s.requestEvents
	if evs == nil {
		return nil
	}
	return func(step string) *RequestEvent {
		typ, ok := evs.Types[step]
		if !ok {
			return nil
		}
		return &RequestEvent{Type: typ, Job: func(r *PublicationRequest) (*queue.Job, error) {
			j, err := evs.Job(workspaceID, typ, r)
			*wrote = *wrote || j != nil
			return j, err
		}}
	}
}

// wake wakes the queue worker after a write that committed a job.
func (s *Service) wake(wrote bool) {
	if wrote && s.eventNotify != nil {
		s.eventNotify()
	}
}

// checkComment refuses a comment longer than MaxCommentLength.
func checkComment(path, comment string) error {
	if len(comment) > MaxCommentLength {
		return canvas.Invalid("Request failed validation.", canvas.Detail{Path: path,
			Message: "must be at most 2000 bytes"})
	}
	return nil
}
