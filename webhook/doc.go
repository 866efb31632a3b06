// Package webhook delivers notifications: a JSON POST to a webhook endpoint,
// made durable through the job queue so that a restart or a receiver that is
// down loses nothing.
//
// Headers come in a fixed order: a subscription's fixed headers, then the
// headers forwarded from the API request (x-svc-forward-NAME becomes NAME),
// then the webhook-* and content-type headers, which neither kind can
// override.
package webhook
