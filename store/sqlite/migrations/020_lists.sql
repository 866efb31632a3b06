-- Listing a workspace's completion runs or tasks (ListRuns), its workflow
-- runs across canvases (ListWorkflowRuns) and its files (ListFiles), newest
-- first; each index holds the rowid, the order of creation that breaks ties
-- between records created at the same instant.

CREATE INDEX runs_kind ON runs (workspace_id, kind, created_at);
CREATE INDEX workflow_runs_workspace ON workflow_runs (workspace_id, created_at);
CREATE INDEX files_workspace ON files (workspace_id, created_at);
