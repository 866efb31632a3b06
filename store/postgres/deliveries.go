package postgres

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// insertDeliveries writes every delivery of ds inside tx; see
// insertDelivery.
func insertDeliveries(ctx context.Context, tx *Tx, ds []webhook.Outgoing) error {
	for _, o := range ds {
		if err := insertDelivery(ctx, tx, o); err != nil {
			return err
		}
	}
	return nil
}

// insertDelivery writes, inside tx, o's log row as given, status pending,
// and o's job (see insertJob) as a job of the delivery, so that the row
// ends with it. A delivery without an id or a job, or whose job is of
// another workspace, is VALIDATION; an id already in the log is CONFLICT.
func insertDelivery(ctx context.Context, tx *Tx, o webhook.Outgoing) error {
	d := o.Delivery
	if d.ID == "" || o.Job == nil {
		return canvas.Invalid("A delivery needs an id and a job.", canvas.Detail{Path: "/delivery", Message: "incomplete"})
	}
	if o.Job.WorkspaceID != d.WorkspaceID {
		return canvas.Invalid("A delivery's job belongs to the delivery's workspace.",
			canvas.Detail{Path: "/job/workspaceId", Message: "not the delivery's"})
	}
	var app any
	if d.ApplicationID != "" {
		app = d.ApplicationID
	}
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, application_id, event_type, url, status,
		attempt_count, payload, event, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $8, $8)`,
		d.ID, d.WorkspaceID, app, d.EventType, d.URL, string(d.Payload), string(d.Event), tx.now); err != nil {
		return translate(err)
	}
	return insertJobOf(ctx, tx, o.Job, d.ID)
}
