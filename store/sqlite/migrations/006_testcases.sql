-- Test cases and test case tags (package testcase). The nullable JSON
-- columns hold JSON text or NULL, exactly as the API shows them. Both are
-- soft-deleted; deleting a tag deletes its assignment rows.

CREATE TABLE test_cases (
	id                     TEXT PRIMARY KEY,
	workspace_id           TEXT NOT NULL REFERENCES workspaces (id),
	prompt_id              TEXT NOT NULL REFERENCES canvases (id),
	title                  TEXT NOT NULL,
	messages               TEXT,
	variables              TEXT,
	variables_rich_content TEXT,
	files                  TEXT,
	expected_output        TEXT,
	evaluator              TEXT,
	answers                TEXT,
	prompt_application_id  TEXT,
	metadata               TEXT,
	created_by             TEXT NOT NULL,
	updated_by             TEXT NOT NULL,
	created_at             TEXT NOT NULL,
	updated_at             TEXT NOT NULL,
	deleted_at             TEXT
);
CREATE INDEX test_cases_prompt ON test_cases (workspace_id, prompt_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE test_case_tags (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	prompt_id    TEXT NOT NULL REFERENCES canvases (id),
	name         TEXT NOT NULL,
	color        TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL,
	deleted_at   TEXT
);
CREATE INDEX test_case_tags_prompt ON test_case_tags (workspace_id, prompt_id, name, id) WHERE deleted_at IS NULL;

CREATE TABLE test_case_tag_assignments (
	test_case_id TEXT NOT NULL REFERENCES test_cases (id),
	tag_id       TEXT NOT NULL REFERENCES test_case_tags (id),
	created_at   TEXT NOT NULL,
	PRIMARY KEY (test_case_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX test_case_tag_assignments_tag ON test_case_tag_assignments (tag_id, test_case_id);
