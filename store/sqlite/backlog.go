package sqlite

import (
	"context"
	"strings"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time check that DB counts the queue's backlog.
var _ queue.Backlog = (*DB)(nil)

// CountQueuedJobs counts the workspace's queued jobs of the given kinds,
// from the jobs_backlog index.
func (db *DB) CountQueuedJobs(ctx context.Context, workspaceID string, kinds []string) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	args := make([]any, 0, len(kinds)+1)
	args = append(args, workspaceID)
	for _, k := range kinds {
		args = append(args, k)
	}
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs INDEXED BY jobs_backlog
		WHERE status = 'queued' AND workspace_id = ? AND kind IN (?`+strings.Repeat(", ?", len(kinds)-1)+`)`,
		args...).Scan(&n)
	return n, err
}
