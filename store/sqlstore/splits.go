package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
)

// Compile-time check that Store implements the env package's Store.
var _ env.Store = (*Store)(nil)

// splitStatsQuery is the one query of SplitStats for a publication of n
// variants (a publication of one version: its runs have no variant). Each
// variant's runs are read through runs_publication, at most
// env.MaxStatsRuns of them; the latency percentiles are nearest-rank, the
// smallest latency whose rank reaches p·n among the completed runs.
func splitStatsQuery(n int) string {
	var b strings.Builder
	b.WriteString(`WITH r AS (`)
	for i := range n {
		if i > 0 {
			b.WriteString(` UNION ALL `)
		}
		cond := fmt.Sprintf(`variant = %d`, i)
		if n == 1 {
			cond = `variant IS NULL`
		}
		fmt.Fprintf(&b, `SELECT %d AS variant, id, status, latency_ms, cost_total FROM (
			SELECT id, status, latency_ms, cost_total FROM runs
			WHERE publication_id = ? AND publication_id <> '' AND %s AND workspace_id = ? LIMIT %d) r%d`,
			i, cond, env.MaxStatsRuns, i)
	}
	b.WriteString(`), lat AS (
		SELECT variant, latency_ms, ROW_NUMBER() OVER (PARTITION BY variant ORDER BY latency_ms) AS rn,
			COUNT(*) OVER (PARTITION BY variant) AS n
		FROM r WHERE status = '` + completion.StatusCompleted + `')
	SELECT r.variant, COUNT(*), COUNT(CASE WHEN r.status = '` + completion.StatusFailed + `' THEN 1 END),
		SUM(r.cost_total), AVG(f.score), COUNT(f.score),
		(SELECT MIN(l.latency_ms) FROM lat l WHERE l.variant = r.variant AND l.rn * 100 >= l.n * 50),
		(SELECT MIN(l.latency_ms) FROM lat l WHERE l.variant = r.variant AND l.rn * 100 >= l.n * 95)
	FROM r LEFT JOIN run_feedback f ON f.run_id = r.id
	GROUP BY r.variant ORDER BY r.variant`)
	return b.String()
}

// SplitStats returns the results of the runs publication id served, per
// variant 0..variants-1, in one query; a variant without runs has zeros.
func (s *Store) SplitStats(ctx context.Context, workspaceID, id string, variants int) ([]env.VariantStats, error) {
	if variants < 1 || variants > env.MaxSplit {
		return nil, fmt.Errorf("sqlstore: split stats of %d variants", variants)
	}
	out := make([]env.VariantStats, variants)
	for i := range out {
		out[i] = env.VariantStats{Variant: i, Currency: model.Currency}
	}
	args := make([]any, 0, 2*variants)
	for range variants {
		args = append(args, id, workspaceID)
	}
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, splitStatsQuery(variants), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v int
			var vs env.VariantStats
			var cost *float64
			if err := rows.Scan(&v, &vs.Runs, &vs.Errors, &cost, &vs.FeedbackMean, &vs.FeedbackCount,
				&vs.LatencyP50Ms, &vs.LatencyP95Ms); err != nil {
				return err
			}
			if v < 0 || v >= variants {
				continue
			}
			vs.Variant, vs.Cost, vs.Currency = v, deref(cost), model.Currency
			vs.Truncated = vs.Runs >= env.MaxStatsRuns
			out[v] = vs
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// feedbackCols are the columns scanFeedback reads, in order, from
// run_feedback.
const feedbackCols = `run_id, score, comment, created_by, created_at, updated_at`

func scanFeedback(r Row) (*completion.Feedback, error) {
	var f completion.Feedback
	return &f, r.Scan(&f.RunID, &f.Score, &f.Comment, &f.CreatedBy, &f.CreatedAt, &f.UpdatedAt)
}

// SetFeedback inserts or replaces the feedback of a run of the workspace:
// one row per run, whose creator and creation time stay as first written.
func (s *Store) SetFeedback(ctx context.Context, p completion.FeedbackParams) (*completion.Feedback, error) {
	var f *completion.Feedback
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE workspace_id = ? AND id = ?`, p.WorkspaceID, p.RunID).Scan(&one)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("run")
		} else if err != nil {
			return err
		}
		f, err = scanFeedback(tx.QueryRow(ctx, `INSERT INTO run_feedback (run_id, workspace_id, score, comment,
			created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET score = excluded.score, comment = excluded.comment,
				updated_at = excluded.updated_at
			RETURNING `+feedbackCols, p.RunID, p.WorkspaceID, p.Score, nullString(p.Comment), p.By, tx.Now, tx.Now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// GetFeedback returns the feedback of a run of the workspace, nil when it
// has none.
func (s *Store) GetFeedback(ctx context.Context, workspaceID, runID string) (*completion.Feedback, error) {
	f, err := getOne(ctx, s, "feedback", scanFeedback, `SELECT `+feedbackCols+` FROM run_feedback
		WHERE workspace_id = ? AND run_id = ?`, workspaceID, runID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, nil
	}
	return f, err
}
