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
// subscription): handled, it enqueues each as its own delivery job.
const JobKindFanout = "webhook.fanout"

// NotifierStore is what a Notifier needs of the store.
type NotifierStore interface {
	// GetApplication returns an application of the workspace.
	GetApplication(ctx context.Context, workspaceID, id string) (*Application, error)
	// ListApplications returns the workspace's applications; canvasID,
	// when not empty, keeps those of that canvas.
	ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*Application, error)
	// EnqueueJobs inserts the jobs in one transaction.
	EnqueueJobs(ctx context.Context, jobs []*queue.Job) error
}

// NotifierOptions wire a Notifier. Store is required.
type NotifierOptions struct {
	Store NotifierStore
	// Notify, when set, wakes the queue worker after jobs are enqueued.
	Notify func()
	// Now is the clock of event timestamps; nil means time.Now.
	Now func() time.Time
}

// Notifier turns application-scoped events into deliveries to the
// subscriptions that take them, and enqueues them as delivery jobs. Each
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

// ApplicationJobs returns the delivery jobs of ev to the subscription of
// application id: none when it does not take ev. An unknown application
// (deleted meanwhile) has none either.
func (n *Notifier) ApplicationJobs(ctx context.Context, workspaceID, applicationID, refID string, ev Event) ([]*queue.Job, error) {
	a, err := n.store.GetApplication(ctx, workspaceID, applicationID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return jobsFor(workspaceID, refID, []*Application{a}, ev)
}

// CanvasJobs returns the delivery jobs of ev to the subscriptions of every
// application of the canvas that takes it.
func (n *Notifier) CanvasJobs(ctx context.Context, workspaceID, canvasID, refID string, ev Event) ([]*queue.Job, error) {
	apps, err := n.store.ListApplications(ctx, workspaceID, canvasID)
	if err != nil {
		return nil, err
	}
	return jobsFor(workspaceID, refID, apps, ev)
}

func jobsFor(workspaceID, refID string, apps []*Application, ev Event) ([]*queue.Job, error) {
	var jobs []*queue.Job
	for _, a := range apps {
		if !Takes(a, ev.Type) {
			continue
		}
		j, err := NewJob(workspaceID, refID, SubscriptionDelivery(a, ev))
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// NotifyCanvas notifies the subscriptions of the canvas' applications of
// an event of type typ with data, enqueueing their jobs in one transaction
// and waking the worker. It is called after the change it reports has
// committed, so a crash between that commit and this call loses this one
// notification; CanvasEventJob, written in the change's own transaction,
// does not.
func (n *Notifier) NotifyCanvas(ctx context.Context, workspaceID, canvasID, refID, typ string, data any) error {
	ev, err := NewEvent(typ, n.now(), data)
	if err != nil {
		return err
	}
	jobs, err := n.CanvasJobs(ctx, workspaceID, canvasID, refID, ev)
	if err != nil || len(jobs) == 0 {
		return err
	}
	if err := n.store.EnqueueJobs(ctx, jobs); err != nil {
		return err
	}
	n.notify()
	return nil
}

// Bundle returns one job that delivers every job of jobs (delivery jobs of
// kind JobKind): nil for none, the job itself for one, and otherwise a job
// of kind JobKindFanout, which HandleFanout turns into the delivery jobs.
// It lets a record whose store writes one job with it carry several
// notifications.
func Bundle(workspaceID, refID string, jobs []*queue.Job) (*queue.Job, error) {
	switch len(jobs) {
	case 0:
		return nil, nil
	case 1:
		return jobs[0], nil
	}
	payloads := make([]json.RawMessage, len(jobs))
	for i, j := range jobs {
		payloads[i] = j.Payload
	}
	raw, err := json.Marshal(payloads)
	if err != nil {
		return nil, err
	}
	return &queue.Job{WorkspaceID: workspaceID, Kind: JobKindFanout, RefID: refID, Payload: raw}, nil
}

// HandleFanout is the queue handler of JobKindFanout: it enqueues the
// bundled deliveries as delivery jobs in one transaction, keeping their
// ids (the webhook-id of each). Handling the same job again (a claim
// whose completion was lost) enqueues nothing: the delivery jobs' ids are
// derived from the fan-out job's.
func (n *Notifier) HandleFanout(ctx context.Context, j *queue.Job) error {
	var payloads []json.RawMessage
	if err := json.Unmarshal(j.Payload, &payloads); err != nil {
		return queue.Permanent(fmt.Errorf("webhook: fan-out payload: %w", err))
	}
	jobs := make([]*queue.Job, 0, len(payloads))
	for _, p := range payloads {
		var d Delivery
		if err := json.Unmarshal(p, &d); err != nil {
			return queue.Permanent(fmt.Errorf("webhook: fan-out payload: %w", err))
		}
		job, err := NewJob(j.WorkspaceID, j.RefID, d)
		if err != nil {
			return queue.Permanent(err)
		}
		// An id derived from the fan-out job and the delivery makes a
		// second handling of the same claim a CONFLICT, not a duplicate.
		job.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(j.ID+"/"+d.ID)).String()
		jobs = append(jobs, job)
	}
	err := n.store.EnqueueJobs(ctx, jobs)
	if canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil // enqueued by an earlier claim whose completion was lost
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
