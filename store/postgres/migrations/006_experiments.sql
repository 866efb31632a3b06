-- Experiments (package experiment): runs of a canvas's test cases against
-- several versions. request, test_case_ids, versions, runner and error are
-- JSON text; versions is the list resolved when the experiment starts.
-- Each result (a test case on a version at one repetition) is written once:
-- the unique key is what lets a resumed job skip the results written.
-- verdict is the evaluators' verdict (NULL: none), annotation a person's.

CREATE TABLE experiments (
	id            text PRIMARY KEY,
	workspace_id  text NOT NULL REFERENCES workspaces (id),
	prompt_id     text NOT NULL,
	status        text NOT NULL,
	request       text NOT NULL,
	test_case_ids text NOT NULL,
	versions      text NOT NULL,
	total         integer NOT NULL,
	runner        text NOT NULL,
	error         text,
	created_by    text NOT NULL,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	started_at    timestamptz,
	completed_at  timestamptz
);
CREATE INDEX experiments_prompt ON experiments (workspace_id, prompt_id, created_at);

CREATE TABLE experiment_results (
	id            text PRIMARY KEY,
	workspace_id  text NOT NULL REFERENCES workspaces (id),
	experiment_id text NOT NULL REFERENCES experiments (id),
	test_case_id  text NOT NULL,
	version_id    text NOT NULL,
	repetition    integer NOT NULL,
	run_id        text,
	output        text,
	latency_ms    bigint NOT NULL,
	usage         text NOT NULL,
	cost          text,
	scores        text NOT NULL,
	verdict       boolean,
	error         text,
	annotation    text,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	UNIQUE (experiment_id, test_case_id, version_id, repetition)
);
CREATE INDEX experiment_results_order ON experiment_results (experiment_id, created_at, id);

-- Evaluators saved per canvas; spec is the evaluator as JSON text.
CREATE TABLE evaluators (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	prompt_id    text NOT NULL,
	name         text NOT NULL,
	spec         text NOT NULL,
	created_by   text NOT NULL,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	UNIQUE (workspace_id, prompt_id, name)
);
