-- Protected environments and publication requests (package env). A
-- protected environment is published to only by a publication request
-- that required_approvals principals other than its requester approve;
-- required_experiment (JSON text {tagIds, minPassRate}, NULL for none) is
-- the experiment its version must have passed first.
--
-- A request remembers what its environment served when it was made
-- (base_version_id) and when its version or a message of it last changed
-- (version_changed_at), so that a read shows an environment that moved
-- since and an approval refuses a version edited since. An approver
-- approves a request once: the primary key of publication_approvals
-- holds it.

ALTER TABLE environments ADD COLUMN protected boolean NOT NULL DEFAULT false;
ALTER TABLE environments ADD COLUMN required_approvals integer NOT NULL DEFAULT 0;
ALTER TABLE environments ADD COLUMN required_experiment text;

CREATE TABLE publication_requests (
	id                 text PRIMARY KEY,
	workspace_id       text NOT NULL REFERENCES workspaces (id),
	environment_id     text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
	canvas_id          text NOT NULL REFERENCES canvases (id),
	version_id         text NOT NULL REFERENCES versions (id),
	status             text NOT NULL,
	comment            text NOT NULL DEFAULT '',
	requested_by       text NOT NULL,
	base_version_id    text,
	version_changed_at timestamptz NOT NULL,
	decided_by         text,
	decision_comment   text NOT NULL DEFAULT '',
	publication_id     text,
	created_at         timestamptz NOT NULL,
	updated_at         timestamptz NOT NULL
);
CREATE INDEX publication_requests_list ON publication_requests (workspace_id, created_at, id);
CREATE INDEX publication_requests_canvas ON publication_requests (canvas_id, created_at, id);

CREATE TABLE publication_approvals (
	request_id text NOT NULL REFERENCES publication_requests (id) ON DELETE CASCADE,
	approver   text NOT NULL,
	comment    text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	PRIMARY KEY (request_id, approver)
);
