package webhook

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/queue"
)

// DeliveryRecord is the delivery log row of a delivery, built here so that
// a store writes it as given and never reads a delivery job's payload.
type DeliveryRecord struct {
	// ID is the delivery's webhook-id, the same for every attempt.
	ID          string
	WorkspaceID string
	// ApplicationID is the application whose subscription is notified, or
	// empty for a per-request webhook_url.
	ApplicationID string
	EventType     string
	URL           string
	// Payload is the delivery job's payload, kept so that a redelivery
	// sends the same notification (RequeueDeliveryParams.Job).
	Payload json.RawMessage
	// Event is the body every attempt sends.
	Event json.RawMessage
}

// Outgoing is one delivery: the queue job that sends it and its delivery
// log row. A store writes both in one transaction, with the row pending,
// and records that the job serves the delivery, so that the row ends with
// the job (see LogStore).
type Outgoing struct {
	Job      *queue.Job
	Delivery DeliveryRecord
}

// NewOutgoing returns the delivery d, sent on behalf of the record refID of
// the workspace: a job of kind JobKind allowed an attempt per entry of
// RetrySchedule and one more, and its log row. The caller writes it in the
// same transaction as the change that caused the notification. An empty
// d.ID is given a new one, which every attempt then sends as webhook-id.
func NewOutgoing(workspaceID, refID string, d Delivery) (Outgoing, error) {
	if d.ID == "" {
		d.ID = uuid.NewString()
	}
	payload, err := json.Marshal(d)
	if err != nil {
		return Outgoing{}, err
	}
	event, err := json.Marshal(d.Event)
	if err != nil {
		return Outgoing{}, err
	}
	return Outgoing{
		Job: deliveryJob(workspaceID, refID, payload),
		Delivery: DeliveryRecord{ID: d.ID, WorkspaceID: workspaceID, ApplicationID: d.ApplicationID,
			EventType: d.Event.Type, URL: d.URL, Payload: payload, Event: event},
	}, nil
}

// deliveryJob returns the job that sends the delivery encoded in payload,
// serving the record refID of the workspace.
func deliveryJob(workspaceID, refID string, payload json.RawMessage) *queue.Job {
	return &queue.Job{WorkspaceID: workspaceID, Kind: JobKind, RefID: refID, Payload: payload,
		MaxAttempts: len(RetrySchedule()) + 1}
}
