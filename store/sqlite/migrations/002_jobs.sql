-- The durable job queue (package queue). A job is claimed with a lease:
-- lease_owner holds it until lease_until, which the owner's heartbeat
-- extends; a running job whose lease has expired is due again. attempts
-- counts the claims. payload is JSON text or NULL.

CREATE TABLE jobs (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL DEFAULT '',
	kind         TEXT NOT NULL,
	ref_id       TEXT NOT NULL DEFAULT '',
	payload      TEXT,
	status       TEXT NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL,
	run_at       TEXT NOT NULL,
	lease_owner  TEXT,
	lease_until  TEXT,
	last_error   TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
);
-- jobs_due serves the claim: queued jobs by run_at, and the running jobs
-- (few: at most the workers' concurrency) whose leases it checks.
CREATE INDEX jobs_due ON jobs (status, run_at);
CREATE INDEX jobs_ref ON jobs (ref_id);
