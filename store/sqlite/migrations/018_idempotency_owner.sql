-- Idempotency keys held by a process (package idempotency): owner names the
-- process that holds a key in progress, and idempotency_owners holds each
-- owner's lease; a key whose owner's lease has lapsed is no longer held.
-- ref_id is the id of the record the request's work wrote, saved in that
-- work's transaction, so that a retry after a crash finds the work.

ALTER TABLE idempotency_keys ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN ref_id TEXT NOT NULL DEFAULT '';

CREATE TABLE idempotency_owners (
	id          TEXT PRIMARY KEY,
	lease_until TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idempotency_owners_lease ON idempotency_owners (lease_until);
