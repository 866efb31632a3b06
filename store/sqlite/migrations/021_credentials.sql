-- Credentials (package credential): a workspace's keys to model vendors.
-- The key itself is never stored in clear: sealed holds its AES-256-GCM
-- ciphertext, bound to the row's workspace_id and id, nonce its nonce and
-- kek_id the id of the key-encryption key it was sealed under; the three
-- are NULL for a credential without a key, and once it is deleted.
-- project_ids is a JSON array of project ids, or NULL for every project;
-- settings a JSON object. A name is unique among the live credentials of
-- a workspace.
--
-- model_prices holds a workspace's price overrides, per million tokens.
--
-- Both are counted by the revision triggers, so that the model caller's
-- cached reads of them follow every change; a credential's last_used_at,
-- written as it serves calls, is not counted.

CREATE TABLE credentials (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	name         TEXT NOT NULL,
	provider     TEXT NOT NULL,
	base_url     TEXT,
	project_ids  TEXT,
	settings     TEXT NOT NULL DEFAULT '{}',
	key_hint     TEXT,
	sealed       BLOB,
	nonce        BLOB,
	kek_id       TEXT,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL,
	created_by   TEXT NOT NULL,
	updated_by   TEXT NOT NULL,
	last_used_at TEXT,
	deleted_at   TEXT
);
CREATE UNIQUE INDEX credentials_live_name ON credentials (workspace_id, name) WHERE deleted_at IS NULL;
CREATE INDEX credentials_workspace ON credentials (workspace_id, created_at, id);
CREATE INDEX credentials_kek ON credentials (kek_id, id) WHERE sealed IS NOT NULL;

CREATE TABLE model_prices (
	workspace_id       TEXT NOT NULL REFERENCES workspaces (id),
	name               TEXT NOT NULL,
	provider           TEXT NOT NULL,
	input_per_million  REAL NOT NULL,
	output_per_million REAL NOT NULL,
	updated_at         TEXT NOT NULL,
	updated_by         TEXT NOT NULL,
	PRIMARY KEY (workspace_id, name)
) WITHOUT ROWID;

CREATE TRIGGER credentials_revision_insert AFTER INSERT ON credentials
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER credentials_revision_update AFTER UPDATE OF id, workspace_id, name, provider, base_url,
	project_ids, settings, key_hint, sealed, nonce, kek_id, created_at, updated_at, created_by, updated_by,
	deleted_at ON credentials
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER credentials_revision_delete AFTER DELETE ON credentials
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER model_prices_revision_insert AFTER INSERT ON model_prices
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER model_prices_revision_update AFTER UPDATE ON model_prices
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
CREATE TRIGGER model_prices_revision_delete AFTER DELETE ON model_prices
BEGIN UPDATE revision SET value = value + 1 WHERE id = 1; END;
