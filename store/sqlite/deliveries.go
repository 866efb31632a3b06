package sqlite

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
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
	var app *string
	if d.ApplicationID != "" {
		app = &d.ApplicationID
	}
	now := formatTime(tx.now)
	_, err := tx.exec(ctx, sqlstore.QInsertDelivery,
		d.ID, d.WorkspaceID, nullString(app), d.EventType, d.URL, string(d.Payload), string(d.Event), now, now)
	if err != nil {
		return translate(err)
	}
	return insertJobOf(ctx, tx, o.Job, d.ID)
}
