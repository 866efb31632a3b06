-- The audit log (package audit): one row per change, appended in the
-- change's own transaction. seq numbers a workspace's events from 1, and
-- hash chains them: each hash covers prev_hash (the hash of the event
-- before) and the event, so that an edited or deleted row breaks the
-- chain where it was. before and after are the resource's JSON, secrets
-- redacted, kept as text byte for byte (the hash covers them so).
--
-- Rows are never updated: the trigger refuses it. Retention deletes the
-- oldest rows of a chain, and nothing else deletes any.

CREATE TABLE audit_events (
	workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
	seq           INTEGER NOT NULL,
	id            TEXT NOT NULL UNIQUE,
	time          TEXT NOT NULL,
	project_id    TEXT,
	actor_type    TEXT NOT NULL,
	actor_id      TEXT NOT NULL,
	action        TEXT NOT NULL,
	resource_type TEXT NOT NULL,
	resource_id   TEXT NOT NULL,
	before        TEXT,
	after         TEXT,
	request_id    TEXT NOT NULL DEFAULT '',
	remote_addr   TEXT NOT NULL DEFAULT '',
	prev_hash     TEXT NOT NULL,
	hash          TEXT NOT NULL,
	PRIMARY KEY (workspace_id, seq)
);
CREATE INDEX audit_events_resource ON audit_events (workspace_id, resource_type, resource_id, seq);
CREATE INDEX audit_events_actor ON audit_events (workspace_id, actor_id, seq);
CREATE INDEX audit_events_time ON audit_events (time);

CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
BEGIN
	SELECT RAISE(ABORT, 'audit events are append-only');
END;
