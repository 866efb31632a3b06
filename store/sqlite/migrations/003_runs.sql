-- Completion and task runs (package completion). request is the resolved
-- model request (JSON); result, error and forward_headers are JSON text or
-- NULL. A run's job, when it has one, is written in the same transaction.

CREATE TABLE runs (
	id               TEXT PRIMARY KEY,
	workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
	kind             TEXT NOT NULL,
	canvas_id        TEXT NOT NULL DEFAULT '',
	version_id       TEXT NOT NULL DEFAULT '',
	environment_name TEXT NOT NULL DEFAULT '',
	application_id   TEXT NOT NULL DEFAULT '',
	model            TEXT NOT NULL,
	status           TEXT NOT NULL,
	async            INTEGER NOT NULL,
	request          TEXT NOT NULL,
	result           TEXT,
	error            TEXT,
	input_tokens     INTEGER NOT NULL DEFAULT 0,
	output_tokens    INTEGER NOT NULL DEFAULT 0,
	latency_ms       INTEGER NOT NULL DEFAULT 0,
	webhook_url      TEXT NOT NULL DEFAULT '',
	forward_headers  TEXT,
	created_by       TEXT NOT NULL,
	created_at       TEXT NOT NULL,
	updated_at       TEXT NOT NULL,
	completed_at     TEXT
);
CREATE INDEX runs_canvas ON runs (workspace_id, canvas_id, created_at);
