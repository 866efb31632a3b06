// Package client is the Go client of a Prompt Canvas server, for programs
// that call the HTTP API rather than embed the engine.
//
// New returns a Client whose typed methods cover the API (canvases,
// versions, environments and publishing, completions, tasks, files, test
// cases, workflow runs, applications and deliveries), send and answer the
// types of package wire (wire.Version, wire.Publication, wire.Run, ...),
// the same types the server encodes and decodes, and return every error
// the server answers as an *Error with the server's code, message and
// details. Idempotent requests, and writes sent
// WithIdempotencyKey, are retried with exponential backoff on connection
// errors and on 429, 502, 503 and 504, honouring Retry-After; a write sent
// WithIdempotencyKey is retried too on a 409 with Retry-After (its key is
// held by a request still in progress).
//
// Prompts serves the versions environments publish from a local cache kept
// fresh by the server's environment watch (GET /environment/watch), with
// conditional polling (If-None-Match) while the watch is down. A cached Get
// costs no request and no allocation; when the server cannot be reached
// the last good version is served marked Stale, and an offline snapshot
// directory written by "canvasd export" can stand in before the server
// ever answered. A prompt the server says is gone is never served.
//
// The client is a Go module of its own that imports the standard library
// only, so that a program that calls the server does not build it.
package client
