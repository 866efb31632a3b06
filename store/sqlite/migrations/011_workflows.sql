-- Workflow runs (package workflow): a run of a workflow version and one
-- step per node of its graph. external_id is the execution id of a run
-- started through completions, NULL otherwise; a run is found by either
-- id. input is JSON text; error and forward_headers are JSON text or NULL.
-- A step's ports are the out ports it selected (JSON array), NULL for all
-- of them; seq is its topological position. A run, its steps and its jobs
-- are written in one transaction; steps are replaced as the engine runs
-- them.

CREATE TABLE workflow_runs (
	id              TEXT PRIMARY KEY,
	external_id     TEXT UNIQUE,
	workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
	canvas_id       TEXT NOT NULL,
	version_id      TEXT NOT NULL,
	environment     TEXT NOT NULL,
	status          TEXT NOT NULL,
	input           TEXT NOT NULL,
	start_node_id   TEXT NOT NULL DEFAULT '',
	end_node_id     TEXT NOT NULL DEFAULT '',
	output_node_id  TEXT NOT NULL DEFAULT '',
	error           TEXT,
	webhook_url     TEXT NOT NULL DEFAULT '',
	forward_headers TEXT,
	application_id  TEXT NOT NULL DEFAULT '',
	created_by      TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL,
	completed_at    TEXT,
	deadline        TEXT NOT NULL
);
CREATE INDEX workflow_runs_external ON workflow_runs (workspace_id, external_id);

CREATE TABLE workflow_steps (
	run_id       TEXT NOT NULL REFERENCES workflow_runs (id),
	id           TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	name         TEXT NOT NULL,
	action_id    TEXT NOT NULL,
	status       TEXT NOT NULL,
	input        TEXT,
	output       TEXT,
	error        TEXT,
	metadata     TEXT,
	ports        TEXT,
	started_at   TEXT,
	completed_at TEXT,
	PRIMARY KEY (run_id, id)
);
CREATE INDEX workflow_steps_run ON workflow_steps (run_id, seq, id);
