-- Who answered a run and what it cost: the credential and provider that
-- served it ('' for the server's own back ends) and its cost in USD, NULL
-- when no price was known. cost_total is kept apart for the sums of run
-- lists.

ALTER TABLE runs ADD COLUMN credential_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN cost_input REAL;
ALTER TABLE runs ADD COLUMN cost_output REAL;
ALTER TABLE runs ADD COLUMN cost_total REAL;
