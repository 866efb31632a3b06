-- A claim reads the oldest due jobs in index order and stops after the
-- limit, so that its cost does not grow with the backlog: queued jobs by
-- (run_at, created_at, id), the claim's order, from jobs_queued, and the
-- running ones, whose expired leases are due again, in the same order from
-- jobs_running (few rows: at most the workers' concurrency). kind is in
-- both so that the kinds filter reads no row. Being partial, neither holds
-- an ended job, the bulk of the table. They replace jobs_due (status,
-- run_at), which made the claim collect and sort every due job.

DROP INDEX jobs_due;
CREATE INDEX jobs_queued ON jobs (run_at, created_at, id, kind) WHERE status = 'queued';
CREATE INDEX jobs_running ON jobs (run_at, created_at, id, kind) WHERE status = 'running';
