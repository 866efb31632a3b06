package sqlite

import (
	"context"
	"database/sql"
	"sort"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time check that DB reports the queue's backlog.
var _ queue.StatsStore = (*DB)(nil)

// Each query reads one partial index (jobs_queued, jobs_running: migration
// 015), so that its cost grows with the backlog, never with the ended jobs.
const (
	qQueuedStats = `SELECT kind, SUM(run_at <= ?1), MIN(CASE WHEN run_at <= ?1 THEN run_at END), SUM(run_at > ?1)
		FROM jobs WHERE status = 'queued' GROUP BY kind`
	qRunningStats = `SELECT kind, COUNT(*) FROM jobs WHERE status = 'running' GROUP BY kind`
)

// QueueStats returns the queued and running jobs of each kind; see
// queue.StatsStore.
func (db *DB) QueueStats(ctx context.Context) ([]queue.KindStats, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	byKind := map[string]*queue.KindStats{}
	get := func(kind string) *queue.KindStats {
		if s := byKind[kind]; s != nil {
			return s
		}
		s := &queue.KindStats{Kind: kind}
		byKind[kind] = s
		return s
	}
	rows, err := tx.query(ctx, qQueuedStats, formatTime(db.Now()))
	if _, err = rowsOf(rows, err, func(r *sql.Rows) (struct{}, error) {
		var kind string
		var due, scheduled int
		var oldest sql.NullString
		if err := r.Scan(&kind, &due, &oldest, &scheduled); err != nil {
			return struct{}{}, err
		}
		s := get(kind)
		s.Due, s.Scheduled = due, scheduled
		if oldest.Valid {
			if err := (timeCol{&s.OldestDue}).Scan(oldest.String); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	}); err != nil {
		return nil, err
	}
	rows, err = tx.query(ctx, qRunningStats)
	if _, err = rowsOf(rows, err, func(r *sql.Rows) (struct{}, error) {
		var kind string
		var n int
		if err := r.Scan(&kind, &n); err != nil {
			return struct{}{}, err
		}
		get(kind).Running = n
		return struct{}{}, nil
	}); err != nil {
		return nil, err
	}
	out := make([]queue.KindStats, 0, len(byKind))
	for _, s := range byKind {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}
