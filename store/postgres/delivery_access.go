package postgres

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// deliveryCanvas is the SQL expression of the canvas a delivery's event
// is about, as webhook.EventCanvasID reads it: data.canvasId, else
// data.promptId (NULL when the event is not JSON).
const deliveryCanvas = `COALESCE(NULLIF(json_or_null(d.event) #>> '{data,canvasId}', ''),
	json_or_null(d.event) #>> '{data,promptId}')`

// ListReachableDeliveries returns one page of the workspace's delivery log,
// newest first, keeping the deliveries whose event is about a live canvas
// of scope: one of its projects (every project when scope.Projects is
// nil), or a personal draft of scope.UserID.
func (db *DB) ListReachableDeliveries(ctx context.Context, f webhook.DeliveryFilter, scope canvas.Scope) (*webhook.DeliveryPage, error) {
	var p params
	where := deliveryFilter(&p, "d.", f)
	where += ` AND ` + reachSQL(&p, deliveryCanvas, scope)
	return db.deliveryPage(ctx, "webhook_deliveries d", where, p, f)
}

// reachSQL is the SQL condition that canvas column col names a live canvas
// of scope: one of its projects (every project when scope.Projects is nil),
// or a personal draft of scope.UserID; its arguments are added to p.
func reachSQL(p *params, col string, scope canvas.Scope) string {
	ws := p.add(scope.WorkspaceID)
	reach := `c.project_id IS NOT NULL`
	if scope.Projects != nil {
		reach = `c.project_id = ANY(` + p.add(ids(scope.Projects)) + `)`
	}
	if scope.UserID != "" {
		reach = `(` + reach + `) OR (c.project_id IS NULL AND c.created_by = ` + p.add(scope.UserID) + `)`
	}
	return `EXISTS (SELECT 1 FROM canvases c WHERE c.workspace_id = ` + ws + ` AND c.id = ` + col +
		` AND c.deleted_at IS NULL AND (` + reach + `))`
}
