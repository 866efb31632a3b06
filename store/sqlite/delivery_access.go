package sqlite

import (
	"context"
	"database/sql"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// deliveryCanvas is the SQL expression of the canvas a delivery's event
// is about, as webhook.EventCanvasID reads it: data.canvasId, else
// data.promptId.
const deliveryCanvas = `CASE WHEN json_valid(d.event) THEN COALESCE(
	NULLIF(json_extract(d.event, '$.data.canvasId'), ''), json_extract(d.event, '$.data.promptId')) END`

// ListReachableDeliveries returns one page of the workspace's delivery log,
// newest first, keeping the deliveries whose event is about a live canvas
// of scope: one of its projects (every project when scope.Projects is
// nil), or a personal draft of scope.UserID.
func (db *DB) ListReachableDeliveries(ctx context.Context, f webhook.DeliveryFilter, scope canvas.Scope) (*webhook.DeliveryPage, error) {
	where := `d.workspace_id = ?`
	args := []any{f.WorkspaceID}
	for _, c := range []struct{ col, v string }{
		{"d.application_id", f.ApplicationID}, {"d.status", f.Status}, {"d.event_type", f.EventType},
	} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	reach, reachArgs := reachSQL(deliveryCanvas, scope)
	where += ` AND ` + reach
	args = append(args, reachArgs...)

	items, total, err := listPage(ctx, db, listQuery{cols: deliveryCols, from: `webhook_deliveries d`, where: where, args: args,
		order: `d.seq DESC`, limit: f.Limit, offset: f.Offset}, func(r *sql.Rows) (*webhook.LoggedDelivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, err
	}
	return &webhook.DeliveryPage{Items: items, Total: total}, nil
}
