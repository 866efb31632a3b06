-- Idempotency keys (package idempotency): one row per key of a workspace.
-- status is 0 while the request runs; then status, content_type and body
-- hold the response to replay. Rows older than the TTL are replaced.

CREATE TABLE idempotency_keys (
	workspace_id TEXT NOT NULL,
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status       INTEGER NOT NULL DEFAULT 0,
	content_type TEXT NOT NULL DEFAULT '',
	body         BLOB,
	created_at   TEXT NOT NULL,
	completed_at TEXT,
	PRIMARY KEY (workspace_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
