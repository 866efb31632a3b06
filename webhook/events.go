package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// JobKindFanout is the queue kind of a job that carries several deliveries
// of one event (a completion's webhook_url and its application's
// subscription): handled, it writes each as its own delivery. Runs now
// write their deliveries themselves (RunDeliveries); HandleFanout remains
// for the fan-out jobs that earlier releases queued.
const JobKindFanout = "webhook.fanout"

// NotifierStore is what a Notifier needs of the store.
type NotifierStore interface {
	// GetApplication returns an application of the workspace.
	GetApplication(ctx context.Context, workspaceID, id string) (*Application, error)
	// ListApplications returns the workspace's applications; canvasID,
	// when not empty, keeps those of that canvas.
	ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*Application, error)
	// CreateDeliveries writes every delivery, its log row and its job, in
	// one transaction (see Outgoing): all or none. A delivery whose id is
	// already in the log, or a job whose id is taken, is CONFLICT; a
	// delivery without an id or a job, or whose job is of another
	// workspace, is VALIDATION.
	CreateDeliveries(ctx context.Context, ds []Outgoing) error
}

// NotifierOptions wire a Notifier. Store is required.
type NotifierOptions struct {
	Store NotifierStore
	// Notify, when set, wakes the queue worker after jobs are enqueued.
	Notify func()
	// Now is the clock of event timestamps; nil means time.Now.
	Now canvas.Clock
}

// Notifier turns application-scoped events into deliveries to the
// subscriptions that take them, and writes them with their jobs. Each
// delivery names its application (Delivery.ApplicationID): the deliverer
// reads the subscription's live secrets and enabled flag at send time.
type Notifier struct {
	store  NotifierStore
	notify func()
	now    func() time.Time
}

// NewNotifier returns a Notifier.
func NewNotifier(opts NotifierOptions) *Notifier {
	n := &Notifier{store: opts.Store, notify: opts.Notify, now: opts.Now}
	if n.notify == nil {
		n.notify = func() {}
	}
	if n.now == nil {
		n.now = time.Now
	}
	return n
}

// Takes reports whether the application's subscription takes events of
// type typ: it is enabled, has a URL, and its filter is empty or names typ.
func Takes(a *Application, typ string) bool {
	s := a.Events
	return s.Enabled && s.URL != "" && (len(s.EventTypes) == 0 || slices.Contains(s.EventTypes, typ))
}

// SubscriptionDelivery returns the delivery of ev to a's subscription,
// with a new id, the subscription's URL and fixed headers, and
// ApplicationID set; whether the subscription takes ev is the caller's
// question (Takes).
func SubscriptionDelivery(a *Application, ev Event) Delivery {
	return Delivery{ID: uuid.NewString(), URL: a.Events.URL, Headers: slices.Clone(a.Events.Headers), Event: ev,
		ApplicationID: a.ID}
}

// NewEvent returns an event of type typ at now whose data is data encoded.
func NewEvent(typ string, now time.Time, data any) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("webhook: encode %s data: %w", typ, err)
	}
	return Event{Type: typ, Timestamp: now.UTC(), Data: raw}, nil
}

// ApplicationDeliveries returns the deliveries of ev to the subscription of
// application id: none when it does not take ev. An unknown application
// (deleted meanwhile) has none either.
func (n *Notifier) ApplicationDeliveries(ctx context.Context, workspaceID, applicationID, refID string, ev Event) ([]Outgoing, error) {
	a, err := n.store.GetApplication(ctx, workspaceID, applicationID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return deliveriesTo(workspaceID, refID, []*Application{a}, ev)
}

// CanvasDeliveries returns the deliveries of ev to the subscriptions of
// every application of the canvas that takes it.
func (n *Notifier) CanvasDeliveries(ctx context.Context, workspaceID, canvasID, refID string, ev Event) ([]Outgoing, error) {
	apps, err := n.store.ListApplications(ctx, workspaceID, canvasID)
	if err != nil {
		return nil, err
	}
	return deliveriesTo(workspaceID, refID, apps, ev)
}

// deliveriesTo returns the deliveries of ev to the subscriptions of apps
// that take it.
func deliveriesTo(workspaceID, refID string, apps []*Application, ev Event) ([]Outgoing, error) {
	var ds []Outgoing
	for _, a := range apps {
		if !Takes(a, ev.Type) {
			continue
		}
		o, err := NewOutgoing(workspaceID, refID, SubscriptionDelivery(a, ev))
		if err != nil {
			return nil, err
		}
		ds = append(ds, o)
	}
	return ds, nil
}

// NotifyCanvas notifies the subscriptions of the canvas' applications of
// an event of type typ with data, writing their deliveries in one
// transaction and waking the worker. It is called after the change it reports has
// committed, so a crash between that commit and this call loses this one
// notification; CanvasEventJob, written in the change's own transaction,
// does not.
func (n *Notifier) NotifyCanvas(ctx context.Context, workspaceID, canvasID, refID, typ string, data any) error {
	ev, err := NewEvent(typ, n.now(), data)
	if err != nil {
		return err
	}
	ds, err := n.CanvasDeliveries(ctx, workspaceID, canvasID, refID, ev)
	if err != nil || len(ds) == 0 {
		return err
	}
	if err := n.store.CreateDeliveries(ctx, ds); err != nil {
		return err
	}
	n.notify()
	return nil
}

// HandleFanout is the queue handler of JobKindFanout, whose payload is a
// JSON array of Delivery: it writes them as deliveries in one transaction,
// keeping their ids (the webhook-id of each). Handling the same job again
// (a claim whose completion was lost) writes nothing: the delivery jobs'
// ids are derived from the fan-out job's.
func (n *Notifier) HandleFanout(ctx context.Context, j *queue.Job) error {
	var payloads []json.RawMessage
	if err := json.Unmarshal(j.Payload, &payloads); err != nil {
		return queue.Permanent(fmt.Errorf("webhook: fan-out payload: %w", err))
	}
	ds := make([]Outgoing, 0, len(payloads))
	for _, p := range payloads {
		var d Delivery
		if err := json.Unmarshal(p, &d); err != nil {
			return queue.Permanent(fmt.Errorf("webhook: fan-out payload: %w", err))
		}
		o, err := NewOutgoing(j.WorkspaceID, j.RefID, d)
		if err != nil {
			return queue.Permanent(err)
		}
		// An id derived from the fan-out job and the delivery makes a
		// second handling of the same claim a CONFLICT, not a duplicate.
		o.Job.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(j.ID+"/"+o.Delivery.ID)).String()
		ds = append(ds, o)
	}
	err := n.store.CreateDeliveries(ctx, ds)
	if canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil // written by an earlier claim whose completion was lost
	} else if err != nil {
		return err
	}
	n.notify()
	return nil
}

// Application returns an application of the workspace (NOT_FOUND when
// unknown): the target of a completion run with its application_id.
func (n *Notifier) Application(ctx context.Context, workspaceID, id string) (*Application, error) {
	return n.store.GetApplication(ctx, workspaceID, id)
}
