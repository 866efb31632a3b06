package sqlite

import (
	"context"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time check that DB counts the queue's backlog.
var _ queue.Backlog = (*DB)(nil)

// qCountQueued counts a workspace's queued jobs of the kinds in a JSON
// array, from the jobs_backlog index; it is prepared at Open, since every
// request that adds model work runs it.
const qCountQueued = `SELECT COUNT(*) FROM jobs INDEXED BY jobs_backlog
	WHERE status = 'queued' AND workspace_id = ?1 AND kind IN (SELECT value FROM json_each(?2))`

// CountQueuedJobs counts the workspace's queued jobs of the given kinds,
// from the jobs_backlog index.
func (db *DB) CountQueuedJobs(ctx context.Context, workspaceID string, kinds []string) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	var n int
	err := db.readStmts[qCountQueued].QueryRowContext(ctx, workspaceID, idList(kinds)).Scan(&n)
	return n, err
}
