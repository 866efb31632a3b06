// Package server exposes Prompt Canvas over the HTTP/JSON interface of the
// specification. New returns an http.Handler; it never opens a listener.
//
// Every handler returns an error through one adapter, and one function maps
// error codes to HTTP statuses and writes the error body, so that every
// error, including unknown routes and wrong methods, has the same shape.
package server
