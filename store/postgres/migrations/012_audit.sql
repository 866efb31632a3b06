-- The audit log (package audit): one row per change, appended in the
-- change's own transaction. seq numbers a workspace's events from 1, and
-- hash chains them: each hash covers prev_hash (the hash of the event
-- before) and the event, so that an edited or deleted row breaks the
-- chain where it was. before and after are the resource's JSON, secrets
-- redacted, kept as text byte for byte (the hash covers them so; jsonb
-- would reorder them). Replicas appending at once take turns on a
-- transaction-scoped advisory lock per workspace, so a workspace keeps
-- one chain.
--
-- Rows are never updated: the trigger refuses it. Retention deletes the
-- oldest rows of a chain, and nothing else deletes any.

CREATE TABLE audit_events (
	workspace_id  text NOT NULL REFERENCES workspaces (id),
	seq           bigint NOT NULL,
	id            text NOT NULL UNIQUE,
	time          timestamptz NOT NULL,
	project_id    text,
	actor_type    text NOT NULL,
	actor_id      text NOT NULL,
	action        text NOT NULL,
	resource_type text NOT NULL,
	resource_id   text NOT NULL,
	before        text,
	after         text,
	request_id    text NOT NULL DEFAULT '',
	remote_addr   text NOT NULL DEFAULT '',
	prev_hash     text NOT NULL,
	hash          text NOT NULL,
	PRIMARY KEY (workspace_id, seq)
);
CREATE INDEX audit_events_resource ON audit_events (workspace_id, resource_type, resource_id, seq);
CREATE INDEX audit_events_actor ON audit_events (workspace_id, actor_id, seq);
CREATE INDEX audit_events_time ON audit_events (time);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit events are append-only';
END
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
	FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
