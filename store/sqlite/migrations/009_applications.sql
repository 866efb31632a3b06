-- Applications and their webhook subscriptions (package webhook). The
-- subscription lives on the application row; headers and event_types hold
-- JSON arrays. Signing secrets are kept apart, one row per secret: during a
-- rotation the previous one carries expires_at and both are live.

CREATE TABLE applications (
	id                   TEXT PRIMARY KEY,
	workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
	name                 TEXT NOT NULL,
	prompt_id            TEXT REFERENCES canvases (id),
	environment_name     TEXT NOT NULL,
	events_enabled       INTEGER NOT NULL DEFAULT 0,
	events_url           TEXT NOT NULL DEFAULT '',
	events_headers       TEXT NOT NULL DEFAULT '[]',
	events_types         TEXT NOT NULL DEFAULT '[]',
	consecutive_failures INTEGER NOT NULL DEFAULT 0,
	disabled_at          TEXT,
	disabled_reason      TEXT,
	created_by           TEXT NOT NULL,
	created_at           TEXT NOT NULL,
	updated_at           TEXT NOT NULL
);
CREATE INDEX applications_workspace ON applications (workspace_id, created_at, id);
CREATE INDEX applications_prompt ON applications (workspace_id, prompt_id);

CREATE TABLE application_secrets (
	id             TEXT PRIMARY KEY,
	application_id TEXT NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	value          TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	expires_at     TEXT
);
CREATE INDEX application_secrets_application ON application_secrets (application_id, created_at);
