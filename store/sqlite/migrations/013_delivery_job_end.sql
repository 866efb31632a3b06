-- A delivery's log row follows its job to the end. The deliverer records
-- each attempt and the delivery's status itself; but a delivery job can end
-- without it: its last attempt's lease expires (the claim fails it), the
-- worker fails it (FailJob) or its record is cancelled (CancelJobs). When a
-- job of kind webhook.deliver ends while its row is still pending, this
-- trigger ends the row in the same transaction: succeeded with the job, or
-- failed with the job's last error ("delivery job cancelled" for a
-- cancellation). A row that another live job of the same delivery (a
-- redelivery, whose ref_id is the delivery's id) still serves stays
-- pending.

CREATE TRIGGER jobs_delivery_end AFTER UPDATE OF status ON jobs
WHEN NEW.kind = 'webhook.deliver' AND NEW.status IN ('succeeded', 'failed', 'cancelled')
	AND OLD.status IN ('queued', 'running')
BEGIN
	UPDATE webhook_deliveries SET
		status = CASE NEW.status WHEN 'succeeded' THEN 'succeeded' ELSE 'failed' END,
		last_error = CASE NEW.status
			WHEN 'succeeded' THEN NULL
			WHEN 'cancelled' THEN 'delivery job cancelled'
			ELSE COALESCE(NULLIF(NEW.last_error, ''), last_error, 'delivery job failed') END,
		updated_at = NEW.updated_at
	WHERE id = json_extract(NEW.payload, '$.id') AND workspace_id = NEW.workspace_id AND status = 'pending'
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.ref_id = webhook_deliveries.id AND j.id <> NEW.id
			AND j.kind = 'webhook.deliver' AND j.status IN ('queued', 'running'));
END;
