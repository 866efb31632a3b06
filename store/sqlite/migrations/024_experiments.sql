-- Experiments (package experiment): runs of a canvas's test cases against
-- several versions. request, test_case_ids, versions, runner and error are
-- JSON text; versions is the list resolved when the experiment starts.
-- Each result (a test case on a version at one repetition) is written once:
-- the unique key is what lets a resumed job skip the results written.
-- verdict is the evaluators' verdict (NULL: none), annotation a person's.

CREATE TABLE experiments (
	id            TEXT PRIMARY KEY,
	workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
	prompt_id     TEXT NOT NULL,
	status        TEXT NOT NULL,
	request       TEXT NOT NULL,
	test_case_ids TEXT NOT NULL,
	versions      TEXT NOT NULL,
	total         INTEGER NOT NULL,
	runner        TEXT NOT NULL,
	error         TEXT,
	created_by    TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	started_at    TEXT,
	completed_at  TEXT
);
CREATE INDEX experiments_prompt ON experiments (workspace_id, prompt_id, created_at);

CREATE TABLE experiment_results (
	id            TEXT PRIMARY KEY,
	workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
	experiment_id TEXT NOT NULL REFERENCES experiments (id),
	test_case_id  TEXT NOT NULL,
	version_id    TEXT NOT NULL,
	repetition    INTEGER NOT NULL,
	run_id        TEXT,
	output        TEXT,
	latency_ms    INTEGER NOT NULL,
	usage         TEXT NOT NULL,
	cost          TEXT,
	scores        TEXT NOT NULL,
	verdict       INTEGER,
	error         TEXT,
	annotation    TEXT,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	UNIQUE (experiment_id, test_case_id, version_id, repetition)
);
CREATE INDEX experiment_results_order ON experiment_results (experiment_id, created_at, id);

-- Evaluators saved per canvas; spec is the evaluator as JSON text.
CREATE TABLE evaluators (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	prompt_id    TEXT NOT NULL,
	name         TEXT NOT NULL,
	spec         TEXT NOT NULL,
	created_by   TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL,
	UNIQUE (workspace_id, prompt_id, name)
);
