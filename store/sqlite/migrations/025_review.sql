-- The review queue (package review): the live runs a canvas's
-- inferencesPercentage samples, written with their run records, and runs
-- added by hand; a run is queued once. An annotation (passed, a score from
-- 0 to 1, a comment) marks an item reviewed. An item goes with its run
-- when the run is purged.
--
-- A run keeps the variables it was rendered with (JSON text, NULL for
-- none), from which a test case is made of it.

ALTER TABLE runs ADD COLUMN variables TEXT;

CREATE TABLE review_items (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id),
	run_id       TEXT NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE,
	canvas_id    TEXT NOT NULL,
	version_id   TEXT NOT NULL,
	source       TEXT NOT NULL,
	status       TEXT NOT NULL,
	passed       INTEGER,
	score        REAL,
	comment      TEXT NOT NULL DEFAULT '',
	annotated_by TEXT NOT NULL DEFAULT '',
	annotated_at TEXT,
	created_by   TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
);
CREATE INDEX review_items_canvas ON review_items (workspace_id, canvas_id, created_at);
