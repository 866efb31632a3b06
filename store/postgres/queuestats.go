package postgres

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time checks that DB reports and counts the queue's backlog.
var (
	_ queue.StatsStore = (*DB)(nil)
	_ queue.Backlog    = (*DB)(nil)
)

// Each query reads one partial index (jobs_queued, jobs_running), so that
// its cost grows with the backlog, never with the ended jobs.
const (
	qQueuedStats = `SELECT kind, COUNT(*) FILTER (WHERE run_at <= $1), MIN(run_at) FILTER (WHERE run_at <= $1),
		COUNT(*) FILTER (WHERE run_at > $1)
		FROM jobs WHERE status = 'queued' GROUP BY kind`
	qRunningStats = `SELECT kind, COUNT(*) FROM jobs WHERE status = 'running' GROUP BY kind`
)

// QueueStats returns the queued and running jobs of each kind; see
// queue.StatsStore.
func (db *DB) QueueStats(ctx context.Context) ([]queue.KindStats, error) {
	byKind := map[string]*queue.KindStats{}
	get := func(kind string) *queue.KindStats {
		if s := byKind[kind]; s != nil {
			return s
		}
		s := &queue.KindStats{Kind: kind}
		byKind[kind] = s
		return s
	}
	err := db.read(ctx, func(tx *Tx) error {
		clear(byKind)
		rows, err := tx.Query(ctx, qQueuedStats, tx.now)
		if _, err = rowsOf(rows, err, func(r pgx.Rows) (struct{}, error) {
			var kind string
			var due, scheduled int
			var oldest *time.Time
			if err := r.Scan(&kind, &due, &oldest, &scheduled); err != nil {
				return struct{}{}, err
			}
			s := get(kind)
			s.Due, s.Scheduled = due, scheduled
			if oldest != nil {
				s.OldestDue = *oldest
			}
			return struct{}{}, nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, qRunningStats)
		_, err = rowsOf(rows, err, func(r pgx.Rows) (struct{}, error) {
			var kind string
			var n int
			if err := r.Scan(&kind, &n); err != nil {
				return struct{}{}, err
			}
			get(kind).Running = n
			return struct{}{}, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]queue.KindStats, 0, len(byKind))
	for _, s := range byKind {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

// CountQueuedJobs counts the workspace's queued jobs of the given kinds,
// from the jobs_backlog index.
func (db *DB) CountQueuedJobs(ctx context.Context, workspaceID string, kinds []string) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	var n int
	err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM jobs
		WHERE status = 'queued' AND workspace_id = $1 AND kind = ANY($2)`, workspaceID, kinds).Scan(&n)
	return n, err
}
