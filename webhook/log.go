package webhook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Delivery statuses in the delivery log.
const (
	// StatusPending is a delivery whose job is queued or being retried.
	StatusPending = "pending"
	// StatusSucceeded is a delivery the receiver accepted with a 2xx.
	StatusSucceeded = "succeeded"
	// StatusFailed is a delivery that will not be attempted again unless
	// it is redelivered.
	StatusFailed = "failed"
)

// ReasonSubscriptionDisabled is the last error of a delivery that was not
// sent because its subscription was disabled when it came due.
const ReasonSubscriptionDisabled = "subscription disabled"

// DefaultMaxConsecutiveFailures is how many deliveries in a row may fail
// for good before a subscription is disabled, unless configured otherwise.
const DefaultMaxConsecutiveFailures = 5

// LoggedDelivery is one row of the delivery log: a notification, keyed by
// its Delivery.ID (the webhook-id every attempt sends), with its outcome so
// far.
type LoggedDelivery struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspaceId"`
	// ApplicationID is the application whose subscription is notified, or
	// nil for a per-request webhook_url.
	ApplicationID *string `json:"applicationId"`
	EventType     string  `json:"eventType"`
	URL           string  `json:"url"`
	// Status is StatusPending, StatusSucceeded or StatusFailed.
	Status string `json:"status"`
	// AttemptCount counts the attempts made, redeliveries included.
	AttemptCount int `json:"attemptCount"`
	// LastError is the reason of the last failure, or nil.
	LastError *string `json:"lastError"`
	// Event is the body every attempt sends.
	Event     json.RawMessage `json:"event"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// Attempts lists every attempt, oldest first; only GetDelivery fills it.
	Attempts []LoggedAttempt `json:"attempts,omitempty"`
	// Seq orders the log: a later delivery has a larger Seq.
	Seq int64 `json:"-"`
}

// LoggedAttempt is one attempt at a delivery.
type LoggedAttempt struct {
	// Number is the attempt's position among the delivery's attempts,
	// from 1.
	Number int       `json:"number"`
	At     time.Time `json:"at"`
	// StatusCode is the receiver's HTTP status, nil when none was received.
	StatusCode *int  `json:"statusCode"`
	LatencyMs  int64 `json:"latencyMs"`
	// Error is why the attempt failed, nil when it succeeded.
	Error *string `json:"error"`
	// ResponseBody is the start (at most 1 KiB) of the receiver's answer.
	ResponseBody string `json:"responseBody"`
}

// NewLoggedAttempt returns the log entry of attempt a.
func NewLoggedAttempt(a *Attempt) LoggedAttempt {
	la := LoggedAttempt{At: a.Timestamp, LatencyMs: a.Duration.Milliseconds(), ResponseBody: string(a.ResponseBody)}
	if a.Status != 0 {
		status := a.Status
		la.StatusCode = &status
	}
	if a.Err != nil {
		msg := a.Err.Error()
		la.Error = &msg
	}
	return la
}

// DeliveryFilter selects a page of the delivery log of one workspace; an
// empty field does not filter.
type DeliveryFilter struct {
	WorkspaceID   string
	ApplicationID string
	Status        string
	EventType     string
	Limit         int
	Offset        int
}

// DeliveryPage is one page of the delivery log, newest first, and the
// number of deliveries the filter selects in all.
type DeliveryPage struct {
	Items []*LoggedDelivery
	Total int
}

// AttemptOutcome is what the deliverer records after an attempt, or after
// deciding not to make one.
type AttemptOutcome struct {
	WorkspaceID string
	DeliveryID  string
	// Attempt is the attempt made, or nil when none was (the subscription
	// was disabled).
	Attempt *LoggedAttempt
	// Status is the delivery's status from now on.
	Status string
	// LastError is the failure's reason, empty after a success.
	LastError string
}

// RequeueDeliveryParams name a delivery of the log to send again, and how
// to make the job that sends it.
type RequeueDeliveryParams struct {
	WorkspaceID string
	DeliveryID  string
	// Job returns the job that sends the delivery again from the payload
	// stored with it (DeliveryRecord.Payload). It is called inside the
	// store's transaction and must not call the store.
	Job func(payload json.RawMessage) *queue.Job
}

// LogStore is the delivery log. Every store method that writes a delivery
// (an Outgoing: CreateDeliveries, a run's or a workflow run's
// notification) writes its row, status pending, in the same transaction
// as its job, so that every queued notification is in the log. When a
// delivery's job ends while its row is still pending (the deliverer did
// not record the end: a lease expired on the last attempt, the worker
// failed the job, or it was cancelled), the store ends the row in the same
// transaction: StatusSucceeded with a job that succeeded, StatusFailed
// with the job's last error otherwise, unless another job of the same
// delivery (a redelivery) is still queued or running.
type LogStore interface {
	// RecordAttempt appends the outcome's attempt, when there is one, to
	// the delivery and sets its status and last error. An unknown delivery
	// is NOT_FOUND.
	RecordAttempt(ctx context.Context, o AttemptOutcome) error
	// RecordAttempts applies every outcome as RecordAttempt does, in order
	// and in one transaction, so that concurrent deliveries share a
	// commit; an outcome of an unknown delivery is skipped.
	RecordAttempts(ctx context.Context, os []AttemptOutcome) error
	// ListDeliveries returns one page of the log, newest first.
	ListDeliveries(ctx context.Context, f DeliveryFilter) (*DeliveryPage, error)
	// ListReachableDeliveries is ListDeliveries over the deliveries whose
	// event is about a canvas of scope (EventCanvasID): a live canvas of
	// scope's workspace, of one of its projects when it has some, or a
	// personal draft of its user. Page and total count only those.
	ListReachableDeliveries(ctx context.Context, f DeliveryFilter, scope canvas.Scope) (*DeliveryPage, error)
	// GetDelivery returns a delivery of the workspace with every attempt;
	// NOT_FOUND when it does not exist in that workspace.
	GetDelivery(ctx context.Context, workspaceID, id string) (*LoggedDelivery, error)
	// RequeueDelivery writes the job p.Job makes from the delivery's
	// stored payload as a new job of the delivery, and puts the delivery
	// back to pending, in one transaction; it returns the delivery with
	// its attempts. NOT_FOUND when the delivery does not exist in the
	// workspace; VALIDATION when p.Job returns no job or a job of another
	// workspace.
	RequeueDelivery(ctx context.Context, p RequeueDeliveryParams) (*LoggedDelivery, error)
}
