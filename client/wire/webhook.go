package wire

import (
	"encoding/json"
	"time"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Application is a receiver of webhook events: its subscription, and
// optionally the canvas and environment its completions run.
type Application struct {
	ID              string       `json:"id"`
	WorkspaceID     string       `json:"workspaceId"`
	Name            string       `json:"name"`
	PromptID        *string      `json:"promptId"`
	EnvironmentName string       `json:"environmentName"`
	Events          Subscription `json:"events"`
	CreatedBy       string       `json:"createdBy"`
	CreatedAt       time.Time    `json:"createdAt"`
	UpdatedAt       time.Time    `json:"updatedAt"`
}

// ApplicationWithSecret is the answer to creating an application: the only
// time its signing secret is shown.
type ApplicationWithSecret struct {
	*Application
	Secret string `json:"secret"`
}

// Subscription is an application's webhook endpoint.
type Subscription struct {
	Enabled             bool       `json:"enabled"`
	URL                 string     `json:"url"`
	Headers             []Header   `json:"headers"`
	EventTypes          []string   `json:"eventTypes"`
	HasSecret           bool       `json:"hasSecret"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	DisabledAt          *time.Time `json:"disabledAt"`
	DisabledReason      *string    `json:"disabledReason"`
}

// Header is a fixed header sent with every delivery.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CreateApplicationParams is the body of POST /applications.
type CreateApplicationParams struct {
	Name            string              `json:"name"`
	PromptID        *string             `json:"promptId,omitempty"`
	EnvironmentName *string             `json:"environmentName,omitempty"`
	Events          *SubscriptionParams `json:"events,omitempty"`
}

// SubscriptionParams are the subscription fields of an application
// request; nil fields take their defaults (or stay as they are).
type SubscriptionParams struct {
	Enabled    *bool     `json:"enabled,omitempty"`
	URL        *string   `json:"url,omitempty"`
	Headers    *[]Header `json:"headers,omitempty"`
	EventTypes *[]string `json:"eventTypes,omitempty"`
}

// LoggedDelivery is one notification of the delivery log with its outcome
// so far; Attempts is filled when one delivery is read.
type LoggedDelivery struct {
	ID            string          `json:"id"`
	WorkspaceID   string          `json:"workspaceId"`
	ApplicationID *string         `json:"applicationId"`
	EventType     string          `json:"eventType"`
	URL           string          `json:"url"`
	Status        string          `json:"status"`
	AttemptCount  int             `json:"attemptCount"`
	LastError     *string         `json:"lastError"`
	Event         json.RawMessage `json:"event"`
	CreatedAt     time.Time       `json:"createdAt"`
	UpdatedAt     time.Time       `json:"updatedAt"`
	Attempts      []LoggedAttempt `json:"attempts,omitempty"`
}

// LoggedAttempt is one attempt at a delivery.
type LoggedAttempt struct {
	Number       int       `json:"number"`
	At           time.Time `json:"at"`
	StatusCode   *int      `json:"statusCode"`
	LatencyMs    int64     `json:"latencyMs"`
	Error        *string   `json:"error"`
	ResponseBody string    `json:"responseBody"`
}
