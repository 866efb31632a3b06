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

ALTER TABLE environments ADD COLUMN protected INTEGER NOT NULL DEFAULT 0;
ALTER TABLE environments ADD COLUMN required_approvals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE environments ADD COLUMN required_experiment TEXT;

CREATE TABLE publication_requests (
	id                 TEXT PRIMARY KEY,
	workspace_id       TEXT NOT NULL REFERENCES workspaces (id),
	environment_id     TEXT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
	canvas_id          TEXT NOT NULL REFERENCES canvases (id),
	version_id         TEXT NOT NULL REFERENCES versions (id),
	status             TEXT NOT NULL,
	comment            TEXT NOT NULL DEFAULT '',
	requested_by       TEXT NOT NULL,
	base_version_id    TEXT,
	version_changed_at TEXT NOT NULL,
	decided_by         TEXT,
	decision_comment   TEXT NOT NULL DEFAULT '',
	publication_id     TEXT,
	created_at         TEXT NOT NULL,
	updated_at         TEXT NOT NULL
);
CREATE INDEX publication_requests_list ON publication_requests (workspace_id, created_at, id);
CREATE INDEX publication_requests_canvas ON publication_requests (canvas_id, created_at, id);

CREATE TABLE publication_approvals (
	request_id TEXT NOT NULL REFERENCES publication_requests (id) ON DELETE CASCADE,
	approver   TEXT NOT NULL,
	comment    TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	PRIMARY KEY (request_id, approver)
);
