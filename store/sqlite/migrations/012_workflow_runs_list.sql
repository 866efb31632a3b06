-- Listing a canvas's workflow runs, newest first (ListWorkflowRuns): the
-- index holds the rowid, the order of creation that breaks ties between
-- runs created at the same instant.

CREATE INDEX workflow_runs_canvas ON workflow_runs (workspace_id, canvas_id, created_at);
