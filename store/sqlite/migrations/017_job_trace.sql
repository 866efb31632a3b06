-- A job records the trace context (a W3C traceparent) of the work that
-- enqueued it, so that the spans of its attempts join that trace; empty
-- when there was none.

ALTER TABLE jobs ADD COLUMN trace TEXT NOT NULL DEFAULT '';
