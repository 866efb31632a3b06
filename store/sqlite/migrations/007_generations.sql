-- Generations (package testcase): one run of a test case against a version.
-- A generation and its job are written in one transaction; an execution is
-- the set of generations sharing an execution_id (one batch run). error and
-- usage are JSON text or NULL; passed is NULL until a completed generation
-- of a test case with an expected output (or an evaluator) is graded.

CREATE TABLE generations (
	id                TEXT PRIMARY KEY,
	workspace_id      TEXT NOT NULL REFERENCES workspaces (id),
	test_case_id      TEXT NOT NULL,
	prompt_id         TEXT NOT NULL,
	prompt_version_id TEXT NOT NULL,
	execution_id      TEXT NOT NULL,
	status            TEXT NOT NULL,
	output            TEXT,
	error             TEXT,
	usage             TEXT,
	latency_ms        INTEGER,
	passed            INTEGER,
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL,
	completed_at      TEXT
);
CREATE INDEX generations_test_case ON generations (workspace_id, test_case_id, created_at);
CREATE INDEX generations_execution ON generations (workspace_id, execution_id);
