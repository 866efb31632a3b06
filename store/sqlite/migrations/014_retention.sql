-- Retention (package retention) deletes ended records older than their
-- retention, oldest first, in small batches. Each partial index holds only
-- the ended rows of its table, ordered by the instant they ended, so that a
-- batch reads no live row and no row it keeps, and so that the writes of
-- live rows (a claim, a heartbeat, a pending delivery's attempt) leave
-- it alone. A job ends at its last update, a delivery at its outcome, a run
-- and a workflow run at completed_at.

CREATE INDEX jobs_ended ON jobs (updated_at)
	WHERE status IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (updated_at)
	WHERE status IN ('succeeded', 'failed');
CREATE INDEX runs_ended ON runs (completed_at)
	WHERE status IN ('completed', 'failed');
CREATE INDEX workflow_runs_ended ON workflow_runs (completed_at)
	WHERE status IN ('completed', 'failed', 'cancelled', 'timeout');
