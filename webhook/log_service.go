package webhook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Delivery log pages.
const (
	DefaultDeliveryLimit = 20
	MaxDeliveryLimit     = 100
)

// DeliveryOptions wire a DeliveryService; every field is required.
type DeliveryOptions struct {
	Log LogStore
	// Applications provides the subscription a Test Request is sent to.
	Applications ApplicationStore
	// Canvases reads the canvases deliveries and applications belong to,
	// to apply their project rule to restricted principals; without it a
	// restricted principal reaches no delivery.
	Canvases canvas.Store
	// Sender sends Test Requests, through the same network guard as
	// every delivery.
	Sender *Sender
}

// DeliveryService reads the delivery log, redelivers, and sends Test
// Requests. Every method reads the Principal from its context and works in
// its workspace: viewers read, admins redeliver and test. A delivery
// follows the project rule of the canvas its event is about
// (LoggedDelivery.CanvasID), and a Test Request that of its application:
// a project-restricted principal reaches, lists and acts on only those of
// canvases it reaches (FORBIDDEN otherwise), and no delivery whose event
// names no canvas (a task's).
type DeliveryService struct {
	log      LogStore
	apps     ApplicationStore
	canvases canvas.Store
	sender   *Sender
}

// NewDeliveryService returns a DeliveryService.
func NewDeliveryService(opts DeliveryOptions) *DeliveryService {
	return &DeliveryService{log: opts.Log, apps: opts.Applications, canvases: opts.Canvases, sender: opts.Sender}
}

// ListDeliveries returns one page of the principal's workspace's delivery
// log, newest first; f.WorkspaceID is ignored. A project-restricted
// principal's page and total count only the deliveries it reaches. A status other than
// pending, succeeded or failed, or a limit outside 1..MaxDeliveryLimit or a
// negative offset, is VALIDATION. It requires the viewer role.
func (s *DeliveryService) ListDeliveries(ctx context.Context, f DeliveryFilter) (*DeliveryPage, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	var details []canvas.Detail
	switch f.Status {
	case "", StatusPending, StatusSucceeded, StatusFailed:
	default:
		details = append(details, canvas.Detail{Path: "/query/status", Message: "must be pending, succeeded or failed"})
	}
	if f.Limit < 1 || f.Limit > MaxDeliveryLimit {
		details = append(details, canvas.Detail{Path: "/query/limit", Message: "must be between 1 and 100"})
	}
	if f.Offset < 0 {
		details = append(details, canvas.Detail{Path: "/query/offset", Message: "must not be negative"})
	}
	if details != nil {
		return nil, canvas.Invalid("The delivery log query is not valid.", details...)
	}
	f.WorkspaceID = p.WorkspaceID
	if p.Restricted() {
		return s.log.ListReachableDeliveries(ctx, f, p.Scope())
	}
	return s.log.ListDeliveries(ctx, f)
}

// GetDelivery returns a delivery of the principal's workspace with every
// attempt. It requires the viewer role.
func (s *DeliveryService) GetDelivery(ctx context.Context, id string) (*LoggedDelivery, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.delivery(ctx, p, id)
}

// delivery returns a delivery of the principal's workspace that the
// principal reaches.
func (s *DeliveryService) delivery(ctx context.Context, p *canvas.Principal, id string) (*LoggedDelivery, error) {
	d, err := s.log.GetDelivery(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if err := reachDelivery(ctx, s.canvases, p, d); err != nil {
		return nil, err
	}
	return d, nil
}

// Redeliver queues the delivery again, with the same payload and so the
// same webhook-id, as a delivery job that serves the delivery itself and
// gets a fresh retry schedule, and returns it, back to pending. It
// requires the admin role.
func (s *DeliveryService) Redeliver(ctx context.Context, id string) (*LoggedDelivery, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if _, err := s.delivery(ctx, p, id); err != nil {
		return nil, err
	}
	return s.log.RequeueDelivery(ctx, RequeueDeliveryParams{WorkspaceID: p.WorkspaceID, DeliveryID: id,
		Job: func(payload json.RawMessage) *queue.Job { return deliveryJob(p.WorkspaceID, id, payload) }})
}

// TestParams override an application's stored subscription for one Test
// Request, so that settings can be tried before they are saved; nil fields
// keep the stored values.
type TestParams struct {
	URL     *string   `json:"url"`
	Headers *[]Header `json:"headers"`
}

// TestResult is what a Test Request observed.
type TestResult struct {
	// Delivered reports a 2xx answer.
	Delivered bool `json:"delivered"`
	// Status is the receiver's HTTP status, nil when none was received.
	Status    *int  `json:"status"`
	LatencyMs int64 `json:"latencyMs"`
	// Error is why the request failed, empty when it succeeded.
	Error string `json:"error,omitempty"`
	// ResponseBody is the start (at most 1 KiB) of the receiver's answer.
	ResponseBody string `json:"responseBody,omitempty"`
}

// TestApplication sends a webhook.test event to the application's
// subscription now, synchronously and once, whether or not the
// subscription is enabled: headers and URL as stored unless params
// override them, signed with the subscription's live secrets, through the
// network guard. The event's data is {applicationId}. An application
// without a URL, or a URL that is not absolute http(s), is VALIDATION. It
// requires the admin role.
func (s *DeliveryService) TestApplication(ctx context.Context, applicationID string, params TestParams) (*TestResult, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if uuid.Validate(applicationID) != nil {
		return nil, canvas.NotFound("application")
	}
	app, err := s.apps.GetApplication(ctx, p.WorkspaceID, applicationID)
	if err != nil {
		return nil, err
	}
	if err := reachApplication(ctx, s.canvases, p, app); err != nil {
		return nil, err
	}
	url, headers := app.Events.URL, app.Events.Headers
	if params.URL != nil {
		url = *params.URL
	}
	if params.Headers != nil {
		headers = *params.Headers
	}
	if url == "" {
		return nil, canvas.Invalid("The subscription has no URL to test.", canvas.Detail{Path: "/url", Message: "is required"})
	}
	if err := CheckURL(url); err != nil {
		return nil, canvas.Invalid("The URL cannot receive webhooks.", canvas.Detail{Path: "/url", Message: err.Error()})
	}
	target, err := s.apps.SubscriptionTarget(ctx, applicationID)
	if err != nil {
		return nil, err
	}
	secrets := make([]string, 0, len(target.Secrets))
	for _, sec := range target.Secrets {
		secrets = append(secrets, sec.Value)
	}
	data, err := json.Marshal(map[string]string{"applicationId": applicationID})
	if err != nil {
		return nil, err
	}
	d := &Delivery{ID: uuid.NewString(), URL: url, Headers: headers, ApplicationID: applicationID,
		Event: Event{Type: EventTest, Timestamp: time.Now().UTC(), Data: data}}
	a := s.sender.SendSigned(ctx, d, secrets)
	res := &TestResult{Delivered: a.OK(), LatencyMs: a.Duration.Milliseconds(), ResponseBody: string(a.ResponseBody)}
	if a.Status != 0 {
		status := a.Status
		res.Status = &status
	}
	if a.Err != nil {
		res.Error = a.Err.Error()
	}
	return res, nil
}
