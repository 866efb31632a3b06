package sqlstore

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// deliveryCanvas is the SQL expression of the canvas a delivery's event
// is about, as webhook.EventCanvasID reads it: data.canvasId, else
// data.promptId (NULL when the event is not JSON).
func (d Dialect) deliveryCanvas() string {
	if d.Postgres {
		return `COALESCE(NULLIF(json_or_null(d.event) #>> '{data,canvasId}', ''),
	json_or_null(d.event) #>> '{data,promptId}')`
	}
	return `CASE WHEN json_valid(d.event) THEN COALESCE(
	NULLIF(json_extract(d.event, '$.data.canvasId'), ''), json_extract(d.event, '$.data.promptId')) END`
}

// ListReachableDeliveries returns one page of the workspace's delivery log,
// newest first, keeping the deliveries whose event is about a live canvas
// of scope: one of its projects (every project when scope.Projects is
// nil), or a personal draft of scope.UserID.
func (s *Store) ListReachableDeliveries(ctx context.Context, f webhook.DeliveryFilter, scope canvas.Scope) (*webhook.DeliveryPage, error) {
	var args []any
	where := deliveryFilter(&args, "d.", f)
	where += ` AND ` + s.d.reachSQL(&args, s.d.deliveryCanvas(), scope)
	return s.deliveryPage(ctx, `webhook_deliveries d`, where, args, f)
}

// reachSQL is the SQL condition that canvas column col names a live canvas
// of scope: one of its projects (every project when scope.Projects is nil),
// or a personal draft of scope.UserID; its arguments are appended to args.
func (d Dialect) reachSQL(args *[]any, col string, scope canvas.Scope) string {
	*args = append(*args, scope.WorkspaceID)
	reach := `c.project_id IS NOT NULL`
	if scope.Projects != nil {
		reach = d.InIDs(`c.project_id`)
		*args = append(*args, IDs(scope.Projects))
	}
	if scope.UserID != "" {
		reach = `(` + reach + `) OR (c.project_id IS NULL AND c.created_by = ?)`
		*args = append(*args, scope.UserID)
	}
	return `EXISTS (SELECT 1 FROM canvases c WHERE c.workspace_id = ? AND c.id = ` + col +
		` AND c.deleted_at IS NULL AND (` + reach + `))`
}
