-- The webhook delivery log (package webhook). A row per notification,
-- keyed by its webhook-id, created in the same transaction as each of its
-- delivery jobs (a redelivery puts the row back to pending); payload is
-- the job payload, kept for redelivery. application_id is NULL for a
-- per-request webhook_url. An attempt row per attempt, numbered from 1.

CREATE TABLE webhook_deliveries (
	seq            INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT NOT NULL UNIQUE,
	workspace_id   TEXT NOT NULL DEFAULT '',
	application_id TEXT,
	event_type     TEXT NOT NULL,
	url            TEXT NOT NULL,
	status         TEXT NOT NULL,
	attempt_count  INTEGER NOT NULL DEFAULT 0,
	last_error     TEXT,
	payload        TEXT NOT NULL,
	event          TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries (workspace_id, seq);
CREATE INDEX webhook_deliveries_application ON webhook_deliveries (workspace_id, application_id, seq);

CREATE TABLE webhook_attempts (
	delivery_id   TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
	number        INTEGER NOT NULL,
	at            TEXT NOT NULL,
	status_code   INTEGER,
	latency_ms    INTEGER NOT NULL,
	error         TEXT,
	response_body TEXT NOT NULL,
	PRIMARY KEY (delivery_id, number)
);
