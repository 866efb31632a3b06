-- The review queue (package review): the live runs a canvas's
-- inferencesPercentage samples, written with their run records, and runs
-- added by hand; a run is queued once. An annotation (passed, a score from
-- 0 to 1, a comment) marks an item reviewed. An item goes with its run
-- when the run is purged.
--
-- A run keeps the variables it was rendered with (JSON text, NULL for
-- none), from which a test case is made of it.

ALTER TABLE runs ADD COLUMN variables text;

CREATE TABLE review_items (
	id           text PRIMARY KEY,
	workspace_id text NOT NULL REFERENCES workspaces (id),
	run_id       text NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE,
	canvas_id    text NOT NULL,
	version_id   text NOT NULL,
	source       text NOT NULL,
	status       text NOT NULL,
	passed       boolean,
	score        double precision,
	comment      text NOT NULL DEFAULT '',
	annotated_by text NOT NULL DEFAULT '',
	annotated_at timestamptz,
	created_by   text NOT NULL,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
CREATE INDEX review_items_canvas ON review_items (workspace_id, canvas_id, created_at);
