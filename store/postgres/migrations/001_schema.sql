-- The whole schema of the Postgres store, equal to store/sqlite's once its
-- migrations 001 to 019 have run: the same tables, the same column names,
-- the same meaning, so that a table-by-table copy from SQLite works. The
-- types are Postgres's own:
--
--   - Timestamps are timestamptz (SQLite: fixed-width UTC text). Postgres
--     keeps microseconds; the store truncates every instant it writes to
--     the microsecond, so what a call returns is what a read returns.
--   - Names that lists are ordered by (environments.name,
--     test_case_tags.name) and jobs.id, the claim's last tie-break, are
--     COLLATE "C": byte order, as SQLite sorts, whatever the database's
--     locale.
--   - Flags are boolean (SQLite: INTEGER 0/1, which Postgres also reads
--     as the text '0' and '1'); counters and sizes bigint. SQLite's
--     timestamp text is valid timestamptz input.
--   - JSON columns are text holding the exact JSON bytes written (as in
--     SQLite), so that a payload reads back byte for byte (webhook bodies
--     are signed). idempotency_keys.body and secrets.value are bytea.
--
-- The differences, each kept as small as a copy can follow:
--
--   - schema_migrations records the applied migrations (SQLite:
--     migrations); it is the store's own and is never copied.
--   - webhook_deliveries.seq is an identity column (SQLite: INTEGER
--     PRIMARY KEY AUTOINCREMENT). A copy that inserts seq values must then
--     move the identity past them:
--       SELECT setval(pg_get_serial_sequence('webhook_deliveries', 'seq'),
--                     COALESCE(MAX(seq), 0) + 1, false) FROM webhook_deliveries;
--   - workflow_runs.seq is an identity column that SQLite does not have
--     (it orders by rowid): the order of insertion, which breaks ties
--     between runs created at the same instant. A copy leaves it to its
--     default, inserting the runs in SQLite's rowid order.
--   - revision is the same one-row counter, bumped by constraint triggers
--     deferred to commit (SQLite: plain triggers), once per transaction.
--     Its row exists once this migration ran; a copy leaves it alone (its
--     value only has to change, which the copy's own writes make it do).
--   - jobs_delivery_end is a trigger function (SQLite: a trigger body).
--   - blob_chunks is new: the bytes of uploaded files, when they are kept
--     in the database (postgres.Blobs). A copy from SQLite has no rows
--     for it; the files of a data directory are copied apart.

CREATE TABLE workspaces (
	id         text PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL
);

CREATE TABLE projects (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	name         text NOT NULL,
	created_at   timestamptz NOT NULL
);
CREATE INDEX projects_workspace ON projects (workspace_id, created_at);

-- api_keys.projects is a JSON array of project ids, or NULL for every
-- project. Only the hash of a token is stored.
CREATE TABLE api_keys (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	role         text NOT NULL,
	projects     text,
	hash         text NOT NULL UNIQUE,
	created_at   timestamptz NOT NULL,
	revoked_at   timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

-- canvases.version_seq is the last version position handed out; it only
-- grows, so a deleted version leaves a gap.
CREATE TABLE canvases (
	id                    text PRIMARY KEY,
	workspace_id          text NOT NULL REFERENCES workspaces (id),
	project_id            text REFERENCES projects (id),
	title                 text NOT NULL,
	inferences_percentage text NOT NULL,
	layout_version        text NOT NULL,
	custom_tags           text NOT NULL DEFAULT '[]',
	allowed_credentials   text,
	version_seq           bigint NOT NULL DEFAULT 0,
	created_by            text NOT NULL,
	updated_by            text NOT NULL,
	deleted_by            text,
	created_at            timestamptz NOT NULL,
	updated_at            timestamptz NOT NULL,
	deleted_at            timestamptz
);
CREATE INDEX canvases_workspace ON canvases (workspace_id, created_at DESC, id) WHERE deleted_at IS NULL;

CREATE TABLE favorites (
	user_id   text NOT NULL,
	canvas_id text NOT NULL REFERENCES canvases (id),
	PRIMARY KEY (user_id, canvas_id)
);

CREATE TABLE versions (
	id                text PRIMARY KEY,
	canvas_id         text NOT NULL REFERENCES canvases (id),
	version_index     bigint NOT NULL,
	title             text NOT NULL,
	title_locked      boolean NOT NULL DEFAULT false,
	configuration     text NOT NULL DEFAULT '{}',
	variables         text NOT NULL DEFAULT '[]',
	draft             boolean NOT NULL DEFAULT false,
	origin_version_id text REFERENCES versions (id),
	workflow_spec     text,
	graph             text,
	is_workflow       boolean NOT NULL DEFAULT false,
	created_by        text NOT NULL,
	updated_by        text NOT NULL,
	deleted_by        text,
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	deleted_at        timestamptz,
	UNIQUE (canvas_id, version_index)
);

CREATE TABLE messages (
	id               text PRIMARY KEY,
	version_id       text NOT NULL REFERENCES versions (id),
	role             text NOT NULL,
	content          text NOT NULL,
	markdown_content text,
	idx              bigint NOT NULL DEFAULT 0,
	created_by       text NOT NULL,
	updated_by       text NOT NULL,
	created_at       timestamptz NOT NULL,
	updated_at       timestamptz NOT NULL,
	deleted_at       timestamptz
);
CREATE INDEX messages_version ON messages (version_id, idx, created_at) WHERE deleted_at IS NULL;

-- environments.last_seq is the Seq of the environment's newest
-- publication, and so the length of its history. A publish locks the
-- environment's row (SELECT ... FOR UPDATE) before it reads the active
-- publication, so that publishes of one environment take turns.
CREATE TABLE environments (
	id           text PRIMARY KEY,
	canvas_id    text NOT NULL REFERENCES canvases (id),
	name         text COLLATE "C" NOT NULL,
	is_system    boolean NOT NULL DEFAULT false,
	last_seq     bigint NOT NULL DEFAULT 0,
	created_by   text NOT NULL,
	created_at   timestamptz NOT NULL,
	UNIQUE (canvas_id, name)
);

CREATE TABLE publications (
	id             text PRIMARY KEY,
	environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
	version_id     text NOT NULL REFERENCES versions (id),
	seq            bigint NOT NULL,
	is_active      boolean NOT NULL,
	published_at   timestamptz NOT NULL,
	published_by   text NOT NULL,
	unpublished_at timestamptz,
	UNIQUE (environment_id, seq)
);
-- The database itself forbids a second active publication of an
-- environment. UNIQUE (environment_id, seq) is the index a history page
-- reads its Seq range from.
CREATE UNIQUE INDEX publications_one_active ON publications (environment_id) WHERE is_active;
CREATE INDEX publications_active_version ON publications (version_id) WHERE is_active;

-- The durable job queue (package queue). A job is claimed with a lease:
-- lease_owner holds it until lease_until, which the owner's heartbeat
-- extends; a running job whose lease has expired is due again. attempts
-- counts the claims. payload is JSON text or NULL. delivery_id names the
-- delivery log row a job sends (NULL for every other job); trace is the
-- W3C traceparent of the work that enqueued it.
CREATE TABLE jobs (
	id           text COLLATE "C" PRIMARY KEY,
	workspace_id text NOT NULL DEFAULT '',
	kind         text NOT NULL,
	ref_id       text NOT NULL DEFAULT '',
	payload      text,
	status       text NOT NULL,
	attempts     bigint NOT NULL DEFAULT 0,
	max_attempts bigint NOT NULL,
	run_at       timestamptz NOT NULL,
	lease_owner  text,
	lease_until  timestamptz,
	last_error   text NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	delivery_id  text,
	trace        text NOT NULL DEFAULT ''
);
CREATE INDEX jobs_ref ON jobs (ref_id);
-- A claim reads the oldest due jobs of each status in index order and
-- stops at its limit, whatever the backlog.
CREATE INDEX jobs_queued ON jobs (run_at, created_at, id, kind) WHERE status = 'queued';
CREATE INDEX jobs_running ON jobs (run_at, created_at, id, kind) WHERE status = 'running';
CREATE INDEX jobs_delivery ON jobs (delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX jobs_backlog ON jobs (workspace_id, kind) WHERE status = 'queued';
CREATE INDEX jobs_ended ON jobs (updated_at) WHERE status IN ('succeeded', 'failed', 'cancelled');

-- Completion and task runs (package completion).
CREATE TABLE runs (
	id               text PRIMARY KEY,
	workspace_id     text NOT NULL REFERENCES workspaces (id),
	kind             text NOT NULL,
	canvas_id        text NOT NULL DEFAULT '',
	version_id       text NOT NULL DEFAULT '',
	environment_name text NOT NULL DEFAULT '',
	application_id   text NOT NULL DEFAULT '',
	model            text NOT NULL,
	status           text NOT NULL,
	async            boolean NOT NULL,
	request          text NOT NULL,
	result           text,
	error            text,
	input_tokens     bigint NOT NULL DEFAULT 0,
	output_tokens    bigint NOT NULL DEFAULT 0,
	latency_ms       bigint NOT NULL DEFAULT 0,
	webhook_url      text NOT NULL DEFAULT '',
	forward_headers  text,
	created_by       text NOT NULL,
	created_at       timestamptz NOT NULL,
	updated_at       timestamptz NOT NULL,
	completed_at     timestamptz
);
CREATE INDEX runs_canvas ON runs (workspace_id, canvas_id, created_at);
CREATE INDEX runs_ended ON runs (completed_at) WHERE status IN ('completed', 'failed');

-- Idempotency keys (package idempotency) and the leases of the processes
-- that hold them.
CREATE TABLE idempotency_keys (
	workspace_id text NOT NULL,
	key          text NOT NULL,
	request_hash text NOT NULL,
	status       bigint NOT NULL DEFAULT 0,
	content_type text NOT NULL DEFAULT '',
	body         bytea,
	created_at   timestamptz NOT NULL,
	completed_at timestamptz,
	owner        text NOT NULL DEFAULT '',
	ref_id       text NOT NULL DEFAULT '',
	PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE idempotency_owners (
	id          text PRIMARY KEY,
	lease_until timestamptz NOT NULL
);
CREATE INDEX idempotency_owners_lease ON idempotency_owners (lease_until);

-- Files of the vault (package vault) and server-side secrets (the key
-- that signs upload URLs, 'vault.upload', shared by every replica).
CREATE TABLE files (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	file_name    text NOT NULL,
	status       text NOT NULL,
	mime_type    text NOT NULL DEFAULT '',
	size         bigint NOT NULL DEFAULT 0,
	sha256       text NOT NULL DEFAULT '',
	blob_key     text NOT NULL DEFAULT '',
	created_by   text NOT NULL,
	created_at   timestamptz NOT NULL,
	uploaded_at  timestamptz,
	expires_at   timestamptz NOT NULL
);

CREATE TABLE secrets (
	name       text PRIMARY KEY,
	value      bytea NOT NULL,
	created_at timestamptz NOT NULL
);

-- Test cases and their tags (package testcase).
CREATE TABLE test_cases (
	id                     text PRIMARY KEY,
	workspace_id           text NOT NULL REFERENCES workspaces (id),
	prompt_id              text NOT NULL REFERENCES canvases (id),
	title                  text NOT NULL,
	messages               text,
	variables              text,
	variables_rich_content text,
	files                  text,
	expected_output        text,
	evaluator              text,
	answers                text,
	prompt_application_id  text,
	metadata               text,
	created_by             text NOT NULL,
	updated_by             text NOT NULL,
	created_at             timestamptz NOT NULL,
	updated_at             timestamptz NOT NULL,
	deleted_at             timestamptz
);
CREATE INDEX test_cases_prompt ON test_cases (workspace_id, prompt_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE test_case_tags (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	prompt_id    text NOT NULL REFERENCES canvases (id),
	name         text COLLATE "C" NOT NULL,
	color        text NOT NULL,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	deleted_at   timestamptz
);
CREATE INDEX test_case_tags_prompt ON test_case_tags (workspace_id, prompt_id, name, id) WHERE deleted_at IS NULL;

CREATE TABLE test_case_tag_assignments (
	test_case_id text NOT NULL REFERENCES test_cases (id),
	tag_id       text NOT NULL REFERENCES test_case_tags (id),
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (test_case_id, tag_id)
);
CREATE INDEX test_case_tag_assignments_tag ON test_case_tag_assignments (tag_id, test_case_id);

-- Generations (package testcase).
CREATE TABLE generations (
	id                text PRIMARY KEY,
	workspace_id      text NOT NULL REFERENCES workspaces (id),
	test_case_id      text NOT NULL,
	prompt_id         text NOT NULL,
	prompt_version_id text NOT NULL,
	execution_id      text NOT NULL,
	status            text NOT NULL,
	output            text,
	error             text,
	usage             text,
	latency_ms        bigint,
	passed            boolean,
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	completed_at      timestamptz
);
CREATE INDEX generations_test_case ON generations (workspace_id, test_case_id, created_at);
CREATE INDEX generations_execution ON generations (workspace_id, execution_id);

-- Applications, their webhook subscriptions and signing secrets (package
-- webhook).
CREATE TABLE applications (
	id                   text PRIMARY KEY,
	workspace_id         text NOT NULL REFERENCES workspaces (id),
	name                 text NOT NULL,
	prompt_id            text REFERENCES canvases (id),
	environment_name     text NOT NULL,
	events_enabled       boolean NOT NULL DEFAULT false,
	events_url           text NOT NULL DEFAULT '',
	events_headers       text NOT NULL DEFAULT '[]',
	events_types         text NOT NULL DEFAULT '[]',
	consecutive_failures bigint NOT NULL DEFAULT 0,
	disabled_at          timestamptz,
	disabled_reason      text,
	created_by           text NOT NULL,
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL
);
CREATE INDEX applications_workspace ON applications (workspace_id, created_at, id);
CREATE INDEX applications_prompt ON applications (workspace_id, prompt_id);

CREATE TABLE application_secrets (
	id             text PRIMARY KEY,
	application_id text NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	value          text NOT NULL,
	created_at     timestamptz NOT NULL,
	expires_at     timestamptz
);
CREATE INDEX application_secrets_application ON application_secrets (application_id, created_at);

-- The webhook delivery log (package webhook): a row per notification,
-- keyed by its webhook-id, and a row per attempt, numbered from 1.
CREATE TABLE webhook_deliveries (
	seq            bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	id             text NOT NULL UNIQUE,
	workspace_id   text NOT NULL DEFAULT '',
	application_id text,
	event_type     text NOT NULL,
	url            text NOT NULL,
	status         text NOT NULL,
	attempt_count  bigint NOT NULL DEFAULT 0,
	last_error     text,
	payload        text NOT NULL,
	event          text NOT NULL,
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries (workspace_id, seq);
CREATE INDEX webhook_deliveries_application ON webhook_deliveries (workspace_id, application_id, seq);
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (updated_at) WHERE status IN ('succeeded', 'failed');

CREATE TABLE webhook_attempts (
	delivery_id   text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
	number        bigint NOT NULL,
	at            timestamptz NOT NULL,
	status_code   bigint,
	latency_ms    bigint NOT NULL,
	error         text,
	response_body text NOT NULL,
	PRIMARY KEY (delivery_id, number)
);

-- Workflow runs and their steps (package workflow).
CREATE TABLE workflow_runs (
	id              text PRIMARY KEY,
	external_id     text UNIQUE,
	workspace_id    text NOT NULL REFERENCES workspaces (id),
	canvas_id       text NOT NULL,
	version_id      text NOT NULL,
	environment     text NOT NULL,
	status          text NOT NULL,
	input           text NOT NULL,
	start_node_id   text NOT NULL DEFAULT '',
	end_node_id     text NOT NULL DEFAULT '',
	output_node_id  text NOT NULL DEFAULT '',
	error           text,
	webhook_url     text NOT NULL DEFAULT '',
	forward_headers text,
	application_id  text NOT NULL DEFAULT '',
	created_by      text NOT NULL,
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL,
	completed_at    timestamptz,
	deadline        timestamptz NOT NULL,
	seq             bigint GENERATED BY DEFAULT AS IDENTITY UNIQUE
);
CREATE INDEX workflow_runs_external ON workflow_runs (workspace_id, external_id);
CREATE INDEX workflow_runs_canvas ON workflow_runs (workspace_id, canvas_id, created_at, seq);
CREATE INDEX workflow_runs_ended ON workflow_runs (completed_at)
	WHERE status IN ('completed', 'failed', 'cancelled', 'timeout');

CREATE TABLE workflow_steps (
	run_id       text NOT NULL REFERENCES workflow_runs (id),
	id           text NOT NULL,
	seq          bigint NOT NULL,
	name         text NOT NULL,
	action_id    text NOT NULL,
	status       text NOT NULL,
	input        text,
	output       text,
	error        text,
	metadata     text,
	ports        text,
	started_at   timestamptz,
	completed_at timestamptz,
	PRIMARY KEY (run_id, id)
);
CREATE INDEX workflow_steps_run ON workflow_steps (run_id, seq, id);

-- The bytes of uploaded files kept in the database (postgres.Blobs): a
-- blob is its chunks in order, written in one transaction, so that a
-- reader sees all of them or none.
CREATE TABLE blob_chunks (
	key   text NOT NULL,
	n     bigint NOT NULL,
	data  bytea NOT NULL,
	PRIMARY KEY (key, n)
);

-- A delivery's log row follows its job to the end: when a job of a
-- delivery ends while the row is still pending (its last attempt's lease
-- expired and the claim failed it, the worker failed it, or it was
-- cancelled), the row ends in the same transaction, succeeded with the job
-- or failed with the job's last error. A row that another live job of the
-- same delivery (a redelivery) still serves stays pending.
CREATE FUNCTION jobs_delivery_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE webhook_deliveries SET
		status = CASE NEW.status WHEN 'succeeded' THEN 'succeeded' ELSE 'failed' END,
		last_error = CASE NEW.status
			WHEN 'succeeded' THEN NULL
			WHEN 'cancelled' THEN 'delivery job cancelled'
			ELSE COALESCE(NULLIF(NEW.last_error, ''), last_error, 'delivery job failed') END,
		updated_at = NEW.updated_at
	WHERE id = NEW.delivery_id AND workspace_id = NEW.workspace_id AND status = 'pending'
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.delivery_id = NEW.delivery_id AND j.id <> NEW.id
			AND j.status IN ('queued', 'running'));
	RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_delivery_end AFTER UPDATE OF status ON jobs
	FOR EACH ROW
	WHEN (NEW.delivery_id IS NOT NULL AND NEW.status IN ('succeeded', 'failed', 'cancelled')
		AND OLD.status IN ('queued', 'running'))
	EXECUTE FUNCTION jobs_delivery_end();

-- The revision counter: one number that every transaction changing what
-- the caches derive values from (workspaces, projects, keys, canvases,
-- favorites, versions, messages, environments, publications) increments
-- once, at its commit. The triggers are constraint triggers deferred to
-- the end of the transaction, so that the row lock on the counter is held
-- only while the transaction commits, not while it works; a
-- transaction-local setting makes the second and later changes of a
-- transaction leave the counter alone. Writes to other tables (runs,
-- jobs, idempotency keys...) never touch it, so that they do not empty the
-- caches. The increment commits with the change, so a reader that sees the
-- old number cannot have missed a change it would see the new one for.
CREATE TABLE revision (
	id    integer PRIMARY KEY CHECK (id = 1),
	value bigint NOT NULL
);
INSERT INTO revision (id, value) VALUES (1, 0);

CREATE FUNCTION bump_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('canvas.revision_bumped', true) IS DISTINCT FROM 'yes' THEN
		PERFORM set_config('canvas.revision_bumped', 'yes', true);
		UPDATE revision SET value = value + 1 WHERE id = 1;
	END IF;
	RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER workspaces_revision AFTER INSERT OR UPDATE OR DELETE ON workspaces
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER projects_revision AFTER INSERT OR UPDATE OR DELETE ON projects
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER api_keys_revision AFTER INSERT OR UPDATE OR DELETE ON api_keys
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER canvases_revision AFTER INSERT OR UPDATE OR DELETE ON canvases
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER favorites_revision AFTER INSERT OR UPDATE OR DELETE ON favorites
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER versions_revision AFTER INSERT OR UPDATE OR DELETE ON versions
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER messages_revision AFTER INSERT OR UPDATE OR DELETE ON messages
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER environments_revision AFTER INSERT OR UPDATE OR DELETE ON environments
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();
CREATE CONSTRAINT TRIGGER publications_revision AFTER INSERT OR UPDATE OR DELETE ON publications
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_revision();

-- A safe reading of JSON text: NULL when the text is not JSON. The
-- delivery access check reads the canvas an event names with it.
CREATE FUNCTION json_or_null(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN t::jsonb;
EXCEPTION WHEN others THEN
	RETURN NULL;
END;
$$;
