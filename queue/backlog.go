package queue

import "context"

// Backlog reads how much work waits in the queue, so that a caller can
// refuse new work before the queue grows without bound.
type Backlog interface {
	// CountQueuedJobs returns how many jobs of workspaceID whose kind is
	// one of kinds are queued (waiting to be claimed, whenever they are
	// due). Running and ended jobs do not count.
	CountQueuedJobs(ctx context.Context, workspaceID string, kinds []string) (int, error)
}
