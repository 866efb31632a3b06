-- Composition and A/B releases.
--
-- runs.includes is the JSON array of the includes a run's messages resolved
-- to ([{canvasId, environment?, versionId}]), NULL when none.
-- runs.publication_id and runs.variant say which publication served a run
-- through an environment and, for a split, which entry of the split
-- (0-based) answered; '' and NULL otherwise.
ALTER TABLE runs ADD COLUMN includes TEXT;
ALTER TABLE runs ADD COLUMN publication_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN variant INTEGER;
CREATE INDEX runs_publication ON runs (publication_id, variant) WHERE publication_id <> '';

-- publications.split is the JSON array of a split publication's entries
-- ([{versionId, weight}], version_id being the first entry's), NULL for a
-- publication of one version.
ALTER TABLE publications ADD COLUMN split TEXT;

-- End-user feedback on a run: one row per run, updated in place.
CREATE TABLE run_feedback (
	run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	workspace_id TEXT NOT NULL,
	score        REAL NOT NULL,
	comment      TEXT,
	created_by   TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
);
