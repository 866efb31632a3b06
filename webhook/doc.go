// Package webhook delivers notifications: a JSON POST to a webhook endpoint,
// made durable through the job queue so that a restart or a receiver that is
// down loses nothing.
//
// Headers come in a fixed order: a subscription's fixed headers, then the
// headers forwarded from the API request (x-svc-forward-NAME becomes NAME),
// then the webhook-* and content-type headers, which neither kind can
// override.
//
// NewOutgoing makes of a Delivery its queue job and its delivery log row
// (an Outgoing), which a store writes together; this package decides the
// job's kind and its retries, so that a store reads neither. A Deliverer
// (NewHandler) is the queue handler that makes one attempt per claim
// through a Sender and maps its outcome to success, a permanent failure
// (410, an unusable URL, an address the network guard refuses) or a retry
// after the receiver's Retry-After or the Standard Webhooks schedule
// (RetrySchedule, with jitter). The Sender's client times out after 15 s,
// does not follow redirects, and dials only public addresses unless
// private networks are allowed (internal/netguard).
//
// A notification commits with the change it reports: a run record writes
// its deliveries (RunDeliveries) in its own transaction, and a canvas
// event (publication.created, generation.completed) writes one outbox job
// (Notifier.CanvasEventJob) that Notifier.HandleCanvasEvent later turns
// into the deliveries to the subscriptions of the canvas' applications.
package webhook
