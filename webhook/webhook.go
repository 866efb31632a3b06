package webhook

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// JobKind is the queue kind of a delivery job.
const JobKind = "webhook.deliver"

// ForwardPrefix marks request headers to forward to the webhook endpoint.
const ForwardPrefix = "x-svc-forward-"

// Event types.
const (
	EventCompletionSucceeded = "completion.succeeded"
	EventCompletionFailed    = "completion.failed"
	EventTaskSucceeded       = "task.succeeded"
	EventTaskFailed          = "task.failed"
)

// Header is one header of a delivery; a list keeps the order they are sent
// in.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Event is the body of a notification.
type Event struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Delivery is one notification to send: it is the payload of a delivery job
// (NewOutgoing).
// ID is the webhook-id header, the same for every attempt.
type Delivery struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Headers []Header `json:"headers"`
	Event   Event    `json:"event"`
	// Secret, when set, signs every attempt: a webhook-signature header
	// per Standard Webhooks (see Sign). It is a subscription's "whsec_"
	// secret; per-request webhook_url deliveries have none.
	Secret string `json:"secret,omitempty"`
	// ApplicationID names the application whose subscription the delivery
	// notifies, or is empty for a per-request webhook_url. When set, the
	// deliverer asks the SubscriptionStore at send time whether the
	// subscription is still enabled and signs with its live secrets.
	ApplicationID string `json:"applicationId,omitempty"`
}

// ForwardedHeaders returns the request headers whose names start with
// x-svc-forward-, with the prefix removed and the names lowercased, sorted
// by name so that the order is stable. Headers with an empty name after the
// prefix are dropped.
func ForwardedHeaders(h http.Header) []Header {
	var out []Header
	for name, values := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, ForwardPrefix) || len(lower) == len(ForwardPrefix) {
			continue
		}
		for _, v := range values {
			out = append(out, Header{Name: lower[len(ForwardPrefix):], Value: v})
		}
	}
	sortHeaders(out)
	return out
}

func sortHeaders(hs []Header) {
	slices.SortStableFunc(hs, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
}

// RetrySchedule returns the delay before each retry of a failed delivery
// (Standard Webhooks' schedule: about a day in all); jitter is added to each.
func RetrySchedule() []time.Duration {
	return []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
	}
}
