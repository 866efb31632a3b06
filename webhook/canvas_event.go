package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// JobKindCanvasEvent is the queue kind of the outbox job of a canvas event
// (publication.created, generation.completed): written in the transaction
// of the change it reports, so that the notification commits with the
// change or not at all, and turned by HandleCanvasEvent into the delivery
// jobs of the subscriptions of the canvas' applications.
const JobKindCanvasEvent = "webhook.canvas_event"

// CanvasEvent is the payload of a JobKindCanvasEvent job: an event of type
// Type with Data, about the canvas CanvasID, that happened at Timestamp.
type CanvasEvent struct {
	CanvasID  string          `json:"canvasId"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// CanvasEventJob returns the outbox job of an event of type typ with data
// about the canvas canvasID, serving the record refID (the publication or
// generation reported), timestamped now. The caller writes it in the
// transaction of the change it reports; which applications hear of it is
// decided when the worker handles it.
func (n *Notifier) CanvasEventJob(workspaceID, canvasID, refID, typ string, data any) (*queue.Job, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("webhook: encode %s data: %w", typ, err)
	}
	payload, err := json.Marshal(CanvasEvent{CanvasID: canvasID, Type: typ, Timestamp: n.now().UTC(), Data: raw})
	if err != nil {
		return nil, err
	}
	return &queue.Job{WorkspaceID: workspaceID, Kind: JobKindCanvasEvent, RefID: refID, Payload: payload}, nil
}

// HandleCanvasEvent is the queue handler of JobKindCanvasEvent: it reads
// the canvas' applications now and writes, in one transaction, a delivery
// for each subscription that takes the event. Handling the same job again
// (a claim whose completion was lost) writes nothing: the
// deliveries' ids (their webhook-id) and their jobs' ids are derived from
// the outbox job's id and the application's.
func (n *Notifier) HandleCanvasEvent(ctx context.Context, j *queue.Job) error {
	var ce CanvasEvent
	if err := json.Unmarshal(j.Payload, &ce); err != nil {
		return queue.Permanent(fmt.Errorf("webhook: canvas event payload: %w", err))
	}
	if ce.CanvasID == "" || ce.Type == "" {
		return queue.Permanent(errors.New("webhook: canvas event payload: no canvasId or type"))
	}
	apps, err := n.store.ListApplications(ctx, j.WorkspaceID, ce.CanvasID)
	if err != nil {
		return err
	}
	ev := Event{Type: ce.Type, Timestamp: ce.Timestamp, Data: ce.Data}
	var ds []Outgoing
	for _, a := range apps {
		if !Takes(a, ev.Type) || a.CreatedAt.After(ev.Timestamp) {
			// An application created after the event committed (its job
			// waited in the queue meanwhile) did not subscribe to it.
			continue
		}
		d := SubscriptionDelivery(a, ev)
		d.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(j.ID+"/"+a.ID)).String()
		o, err := NewOutgoing(j.WorkspaceID, j.RefID, d)
		if err != nil {
			return queue.Permanent(err)
		}
		o.Job.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(j.ID+"/"+d.ID)).String()
		ds = append(ds, o)
	}
	if len(ds) == 0 {
		return nil
	}
	err = n.store.CreateDeliveries(ctx, ds)
	if canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil // written by an earlier claim whose completion was lost
	} else if err != nil {
		return err
	}
	n.notify()
	return nil
}
