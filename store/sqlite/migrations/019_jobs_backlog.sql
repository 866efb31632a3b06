-- A workspace's queued jobs by kind, so that counting its backlog (see
-- queue.Backlog) reads that workspace's queued jobs alone. Partial: an
-- ended job, the bulk of the table, is not in it.

CREATE INDEX jobs_backlog ON jobs (workspace_id, kind) WHERE status = 'queued';
