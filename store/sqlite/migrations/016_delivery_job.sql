-- A job that sends a webhook delivery names it: delivery_id is the id of
-- the delivery's log row, set by the store methods that write a delivery
-- with its job (and by nothing else), NULL for every other job. The rule
-- of migration 013, that a delivery's row follows its job to the end, now
-- keys on that column instead of on the job's kind and payload, which the
-- store does not read. The jobs that trigger served (kind webhook.deliver,
-- whose payload's id is the delivery's) get their delivery_id here, once.

ALTER TABLE jobs ADD COLUMN delivery_id TEXT;

UPDATE jobs SET delivery_id = json_extract(payload, '$.id')
	WHERE kind = 'webhook.deliver' AND json_valid(payload);

-- jobs_delivery finds the live jobs of a delivery for the trigger.
CREATE INDEX jobs_delivery ON jobs (delivery_id) WHERE delivery_id IS NOT NULL;

-- When a delivery's job ends while the delivery's row is still pending
-- (the deliverer did not record the end: the last attempt's lease expired
-- and the claim failed the job, the worker failed it, or it was
-- cancelled), the row ends in the same transaction: succeeded with the
-- job, or failed with the job's last error ("delivery job cancelled" for a
-- cancellation). A row that another live job of the same delivery (a
-- redelivery) still serves stays pending.
DROP TRIGGER jobs_delivery_end;

CREATE TRIGGER jobs_delivery_end AFTER UPDATE OF status ON jobs
WHEN NEW.delivery_id IS NOT NULL AND NEW.status IN ('succeeded', 'failed', 'cancelled')
	AND OLD.status IN ('queued', 'running')
BEGIN
	UPDATE webhook_deliveries SET
		status = CASE NEW.status WHEN 'succeeded' THEN 'succeeded' ELSE 'failed' END,
		last_error = CASE NEW.status
			WHEN 'succeeded' THEN NULL
			WHEN 'cancelled' THEN 'delivery job cancelled'
			ELSE COALESCE(NULLIF(NEW.last_error, ''), last_error, 'delivery job failed') END,
		updated_at = NEW.updated_at
	WHERE id = NEW.delivery_id AND workspace_id = NEW.workspace_id AND status = 'pending'
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.delivery_id = NEW.delivery_id AND j.id <> NEW.id
			AND j.status IN ('queued', 'running'));
END;
