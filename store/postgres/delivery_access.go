package postgres

import "github.com/promptcanvas/promptcanvas/canvas"

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
