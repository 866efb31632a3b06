-- Foundation schema: workspaces, projects, API keys, canvases, versions,
-- messages, environments and publications. Timestamps are fixed-width UTC
-- text (formatTime), so text order is time order. JSON columns hold text.

CREATE TABLE workspaces (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL
);

CREATE TABLE projects (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	name         TEXT NOT NULL,
	created_at   TEXT NOT NULL
);
CREATE INDEX projects_workspace ON projects (workspace_id, created_at);

-- api_keys.projects is a JSON array of project ids, or NULL for every
-- project. Only the hash of a token is stored.
CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	role         TEXT NOT NULL,
	projects     TEXT,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	revoked_at   TEXT
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

-- canvases.version_seq is the last version position handed out; it only
-- grows, so a deleted version leaves a gap.
CREATE TABLE canvases (
	id                    TEXT PRIMARY KEY,
	workspace_id          TEXT NOT NULL REFERENCES workspaces (id),
	project_id            TEXT REFERENCES projects (id),
	title                 TEXT NOT NULL,
	inferences_percentage TEXT NOT NULL,
	layout_version        TEXT NOT NULL,
	custom_tags           TEXT NOT NULL DEFAULT '[]',
	allowed_credentials   TEXT,
	version_seq           INTEGER NOT NULL DEFAULT 0,
	created_by            TEXT NOT NULL,
	updated_by            TEXT NOT NULL,
	deleted_by            TEXT,
	created_at            TEXT NOT NULL,
	updated_at            TEXT NOT NULL,
	deleted_at            TEXT
);
CREATE INDEX canvases_workspace ON canvases (workspace_id, created_at DESC, id) WHERE deleted_at IS NULL;

CREATE TABLE favorites (
	user_id   TEXT NOT NULL,
	canvas_id TEXT NOT NULL REFERENCES canvases (id),
	PRIMARY KEY (user_id, canvas_id)
) WITHOUT ROWID;

CREATE TABLE versions (
	id                TEXT PRIMARY KEY,
	canvas_id         TEXT NOT NULL REFERENCES canvases (id),
	version_index     INTEGER NOT NULL,
	title             TEXT NOT NULL,
	title_locked      INTEGER NOT NULL DEFAULT 0,
	configuration     TEXT NOT NULL DEFAULT '{}',
	variables         TEXT NOT NULL DEFAULT '[]',
	draft             INTEGER NOT NULL DEFAULT 0,
	origin_version_id TEXT REFERENCES versions (id),
	workflow_spec     TEXT,
	graph             TEXT,
	is_workflow       INTEGER NOT NULL DEFAULT 0,
	created_by        TEXT NOT NULL,
	updated_by        TEXT NOT NULL,
	deleted_by        TEXT,
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL,
	deleted_at        TEXT,
	UNIQUE (canvas_id, version_index)
);

CREATE TABLE messages (
	id               TEXT PRIMARY KEY,
	version_id       TEXT NOT NULL REFERENCES versions (id),
	role             TEXT NOT NULL,
	content          TEXT NOT NULL,
	markdown_content TEXT,
	idx              INTEGER NOT NULL DEFAULT 0,
	created_by       TEXT NOT NULL,
	updated_by       TEXT NOT NULL,
	created_at       TEXT NOT NULL,
	updated_at       TEXT NOT NULL,
	deleted_at       TEXT
);
CREATE INDEX messages_version ON messages (version_id, idx, created_at) WHERE deleted_at IS NULL;

-- environments.last_seq is the Seq of the environment's newest
-- publication, and so the length of its history.
CREATE TABLE environments (
	id           TEXT PRIMARY KEY,
	canvas_id    TEXT NOT NULL REFERENCES canvases (id),
	name         TEXT NOT NULL,
	is_system    INTEGER NOT NULL DEFAULT 0,
	last_seq     INTEGER NOT NULL DEFAULT 0,
	created_by   TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	UNIQUE (canvas_id, name)
);

CREATE TABLE publications (
	id             TEXT PRIMARY KEY,
	environment_id TEXT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
	version_id     TEXT NOT NULL REFERENCES versions (id),
	seq            INTEGER NOT NULL,
	is_active      INTEGER NOT NULL,
	published_at   TEXT NOT NULL,
	published_by   TEXT NOT NULL,
	unpublished_at TEXT,
	UNIQUE (environment_id, seq)
);
-- The database itself forbids a second active publication of an
-- environment.
CREATE UNIQUE INDEX publications_one_active ON publications (environment_id) WHERE is_active;
CREATE INDEX publications_active_version ON publications (version_id) WHERE is_active;
