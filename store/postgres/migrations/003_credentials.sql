-- Credentials (package credential) and model price overrides, as SQLite's
-- migration 021 describes them: sealed, nonce and kek_id hold the sealed
-- key (NULL without a key, and once deleted); project_ids is a JSON array
-- or NULL for every project. Both tables bump the revision counter, but
-- for a credential's last_used_at, which serving calls writes.

CREATE TABLE credentials (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	name         text NOT NULL,
	provider     text NOT NULL,
	base_url     text,
	project_ids  text,
	settings     text NOT NULL DEFAULT '{}',
	key_hint     text,
	sealed       bytea,
	nonce        bytea,
	kek_id       text,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	created_by   text NOT NULL,
	updated_by   text NOT NULL,
	last_used_at timestamptz,
	deleted_at   timestamptz
);
CREATE UNIQUE INDEX credentials_live_name ON credentials (workspace_id, name) WHERE deleted_at IS NULL;
CREATE INDEX credentials_workspace ON credentials (workspace_id, created_at, id);
CREATE INDEX credentials_kek ON credentials (kek_id, id) WHERE sealed IS NOT NULL;

CREATE TABLE model_prices (
	workspace_id       text NOT NULL REFERENCES workspaces (id),
	name               text NOT NULL,
	provider           text NOT NULL,
	input_per_million  double precision NOT NULL,
	output_per_million double precision NOT NULL,
	updated_at         timestamptz NOT NULL,
	updated_by         text NOT NULL,
	PRIMARY KEY (workspace_id, name)
);

CREATE CONSTRAINT TRIGGER credentials_revision AFTER INSERT OR DELETE OR UPDATE OF id, workspace_id, name,
	provider, base_url, project_ids, settings, key_hint, sealed, nonce, kek_id, created_at, updated_at,
	created_by, updated_by, deleted_at ON credentials
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER model_prices_revision AFTER INSERT OR UPDATE OR DELETE ON model_prices
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
