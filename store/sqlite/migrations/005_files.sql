-- Files of the vault (package vault). A file is pending until its bytes
-- arrive; then mime_type, size, sha256, blob_key and uploaded_at are set.
-- expires_at is when its upload URL stops working. Its expiry job is
-- written in the same transaction as the row.
--
-- secrets holds server-side secrets created on first use, such as the
-- key that signs upload URLs (name 'vault.upload').

CREATE TABLE files (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	file_name    TEXT NOT NULL,
	status       TEXT NOT NULL,
	mime_type    TEXT NOT NULL DEFAULT '',
	size         INTEGER NOT NULL DEFAULT 0,
	sha256       TEXT NOT NULL DEFAULT '',
	blob_key     TEXT NOT NULL DEFAULT '',
	created_by   TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	uploaded_at  TEXT,
	expires_at   TEXT NOT NULL
);

CREATE TABLE secrets (
	name       TEXT PRIMARY KEY,
	value      BLOB NOT NULL,
	created_at TEXT NOT NULL
) WITHOUT ROWID;
