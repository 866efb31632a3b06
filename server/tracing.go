package server

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracerName names the spans the server makes.
const tracerName = "github.com/promptcanvas/promptcanvas/server"

// propagator reads a caller's W3C trace context (traceparent), so that a
// request's span joins the caller's trace.
var propagator = propagation.TraceContext{}

// startSpan starts the server span of r, named by its route pattern, and
// returns r under the span's context and the function that ends the span
// with the answered status. A server that records no spans only carries a
// caller's trace context on, so that jobs, model calls and webhook
// requests still join the caller's trace.
func (s *Server) startSpan(r *http.Request, pattern string) (*http.Request, func(status int)) {
	if s.tracer == nil {
		if ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header)); trace.SpanContextFromContext(ctx).IsRemote() {
			r = r.WithContext(ctx)
		}
		return r, endNothing
	}
	name := pattern
	if name == "" {
		name = r.Method + " " + unmatchedRoute
	}
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path), attribute.String("http.route", pattern),
			attribute.String("request.id", requestIDFrom(r.Context()))))
	return r.WithContext(ctx), func(status int) {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
	}
}

// endNothing ends the span a server that records none did not start.
func endNothing(int) {}

// isNoop reports whether tp records nothing, so that the server need not
// build spans for it.
func isNoop(tp trace.TracerProvider) bool {
	_, ok := tp.(noop.TracerProvider)
	return ok
}
