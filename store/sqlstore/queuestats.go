package sqlstore

import (
	"context"
	"sort"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time checks that Store reports and counts the queue's backlog.
var (
	_ queue.StatsStore = (*Store)(nil)
	_ queue.Backlog    = (*Store)(nil)
)

// Each query reads one partial index (jobs_queued, jobs_running), so that
// its cost grows with the backlog, never with the ended jobs.
const (
	qQueuedStats = `SELECT kind, COUNT(*) FILTER (WHERE run_at <= ?), MIN(run_at) FILTER (WHERE run_at <= ?),
		COUNT(*) FILTER (WHERE run_at > ?)
		FROM jobs WHERE status = 'queued' GROUP BY kind`
	qRunningStats = `SELECT kind, COUNT(*) FROM jobs WHERE status = 'running' GROUP BY kind`
)

// QueueStats returns the queued and running jobs of each kind; see
// queue.StatsStore.
func (s *Store) QueueStats(ctx context.Context) ([]queue.KindStats, error) {
	byKind := map[string]*queue.KindStats{}
	get := func(kind string) *queue.KindStats {
		if k := byKind[kind]; k != nil {
			return k
		}
		k := &queue.KindStats{Kind: kind}
		byKind[kind] = k
		return k
	}
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		clear(byKind)
		rows, err := tx.Query(ctx, qQueuedStats, tx.Now, tx.Now, tx.Now)
		if _, err = RowsOf(rows, err, func(r Rows) (struct{}, error) {
			var kind string
			var due, scheduled int
			var oldest *time.Time
			if err := r.Scan(&kind, &due, &oldest, &scheduled); err != nil {
				return struct{}{}, err
			}
			k := get(kind)
			k.Due, k.Scheduled = due, scheduled
			if oldest != nil {
				k.OldestDue = *oldest
			}
			return struct{}{}, nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, qRunningStats)
		_, err = RowsOf(rows, err, func(r Rows) (struct{}, error) {
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
	for _, k := range byKind {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

// The count of a workspace's queued jobs of some kinds, from the
// jobs_backlog index, which SQLite is told to use.
const (
	qCountQueuedSQLite = `SELECT COUNT(*) FROM jobs INDEXED BY jobs_backlog
		WHERE status = 'queued' AND workspace_id = ? AND kind IN (SELECT value FROM json_each(?))`
	qCountQueuedPostgres = `SELECT COUNT(*) FROM jobs
		WHERE status = 'queued' AND workspace_id = ? AND kind = ANY(?)`
)

// QCountQueued is the count of CountQueuedJobs in dialect d; the SQLite
// driver prepares it at Open, since every request that adds model work
// runs it.
func (d Dialect) QCountQueued() string {
	if d.Postgres {
		return qCountQueuedPostgres
	}
	return qCountQueuedSQLite
}

// CountQueuedJobs counts the workspace's queued jobs of the given kinds,
// from the jobs_backlog index.
func (s *Store) CountQueuedJobs(ctx context.Context, workspaceID string, kinds []string) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	var n int
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		return tx.QueryRow(ctx, s.d.QCountQueued(), workspaceID, IDs(kinds)).Scan(&n)
	})
	return n, err
}
