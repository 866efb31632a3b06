package webhook

import (
	"context"
	"time"
)

// Event types besides those of completions and tasks.
const (
	EventPublicationCreated  = "publication.created"
	EventGenerationCompleted = "generation.completed"
	EventTest                = "webhook.test"
	// A workflow run ended completed, ended otherwise (failed, cancelled,
	// timeout), or paused for a review or an action.
	EventWorkflowRunCompleted = "workflow_run.completed"
	EventWorkflowRunFailed    = "workflow_run.failed"
	EventWorkflowRunPaused    = "workflow_run.paused"
	// An experiment ended: completed, failed or cancelled.
	EventExperimentCompleted = "experiment.completed"
	// A publication request was made, approved (once per approval),
	// rejected, withdrawn, or published by its last approval.
	EventPublicationRequestCreated   = "publication_request.created"
	EventPublicationRequestApproved  = "publication_request.approved"
	EventPublicationRequestRejected  = "publication_request.rejected"
	EventPublicationRequestWithdrawn = "publication_request.withdrawn"
	EventPublicationRequestPublished = "publication_request.published"
)

// Application ties a canvas, at one of its environments, to a webhook
// subscription: a completion run with its application_id runs that canvas
// there and notifies the subscription.
type Application struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspaceId"`
	Name        string `json:"name"`
	// PromptID is the canvas the application runs, or nil.
	PromptID *string `json:"promptId"`
	// EnvironmentName is the environment it runs; production when empty.
	EnvironmentName string       `json:"environmentName"`
	Events          Subscription `json:"events"`
	CreatedBy       string       `json:"createdBy"`
	CreatedAt       time.Time    `json:"createdAt"`
	UpdatedAt       time.Time    `json:"updatedAt"`
}

// Subscription is an application's webhook endpoint: the Events tab of the
// operator console.
type Subscription struct {
	Enabled bool   `json:"enabled"`
	URL     string `json:"url"`
	// Headers are the fixed headers, sent first, in this order.
	Headers []Header `json:"headers"`
	// EventTypes filters what is sent; empty means every event.
	EventTypes []string `json:"eventTypes"`
	// HasSecret tells whether deliveries are signed; the secret itself is
	// shown once, when it is generated or rotated, and never read back.
	HasSecret bool `json:"hasSecret"`
	// ConsecutiveFailures counts deliveries that failed for good in a row;
	// at the configured limit the subscription is disabled.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// DisabledAt and DisabledReason record why deliveries stopped (a 410
	// from the receiver, or too many failures), or are nil.
	DisabledAt     *time.Time `json:"disabledAt"`
	DisabledReason *string    `json:"disabledReason"`
}

// Secret is one signing secret of a subscription. During a rotation the
// previous secret stays valid until ExpiresAt, and every delivery is signed
// with both.
type Secret struct {
	Value     string     `json:"-"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// SubscriptionTarget is what a delivery needs of a subscription at the
// moment it is sent: whether it is still enabled, and its live secrets.
type SubscriptionTarget struct {
	ApplicationID string
	Enabled       bool
	Secrets       []Secret
	// ConsecutiveFailures is the subscription's count of deliveries that
	// failed for good in a row (Subscription.ConsecutiveFailures): the
	// deliverer disables the subscription when one more failure reaches
	// its limit.
	ConsecutiveFailures int
}

// SubscriptionStore is what the delivery engine needs of the application
// store: the current target of a subscription, and recording outcomes.
type SubscriptionStore interface {
	// SubscriptionTarget returns the application's subscription as it is now.
	SubscriptionTarget(ctx context.Context, applicationID string) (*SubscriptionTarget, error)
	// RecordSubscriptionOutcome resets the failure count after a success, or
	// counts a final failure and disables the subscription with reason when
	// disable is set.
	RecordSubscriptionOutcome(ctx context.Context, applicationID string, succeeded, disable bool, reason string) error
}
