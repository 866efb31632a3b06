package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/review"
)

// Compile-time check that Store implements the review package's Store.
var _ review.Store = (*Store)(nil)

// reviewCols are the columns scanReviewItem reads, in order, from
// review_items i.
const reviewCols = `i.id, i.workspace_id, i.run_id, i.canvas_id, i.version_id, i.source, i.status, i.passed,
	i.score, i.comment, i.annotated_by, i.annotated_at, i.created_by, i.created_at, i.updated_at`

// qInsertReviewItem inserts an item, pending.
const qInsertReviewItem = `INSERT INTO review_items (id, workspace_id, run_id, canvas_id, version_id, source,
	status, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func scanReviewItem(r Row) (*review.Item, error) {
	var it review.Item
	var passed *bool
	var score *float64
	var comment, by string
	var at *time.Time
	err := r.Scan(&it.ID, &it.WorkspaceID, &it.RunID, &it.PromptID, &it.VersionID, &it.Source, &it.Status, &passed,
		&score, &comment, &by, &at, &it.CreatedBy, &it.CreatedAt, &it.UpdatedAt)
	if err == nil && passed != nil && at != nil {
		it.Annotation = &review.Annotation{Passed: *passed, Score: score, Comment: comment, AnnotatedBy: by,
			AnnotatedAt: *at}
	}
	return &it, err
}

// sampleRun inserts the review item of run r, a live run, when its
// canvas's inferencesPercentage takes s; it runs in the transaction that
// records the run, and reads the percentage there.
func sampleRun(ctx context.Context, tx *Tx, r *completion.Run, s *completion.Sample) error {
	var pct string
	err := tx.QueryRow(ctx, `SELECT inferences_percentage FROM canvases WHERE workspace_id = ? AND id = ?`,
		r.WorkspaceID, r.CanvasID).Scan(&pct)
	if errors.Is(err, ErrNoRows) || (err == nil && !s.Takes(pct)) {
		return nil
	} else if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, qInsertReviewItem, tx.NewID(), r.WorkspaceID, r.ID, r.CanvasID, r.VersionID,
		review.SourceSampled, review.StatusPending, r.CreatedBy, tx.Now, tx.Now)
	return err
}

// AddReviewItem inserts it, pending; a run queued already is CONFLICT
// (the unique run_id).
func (s *Store) AddReviewItem(ctx context.Context, it *review.Item) error {
	return s.writeAudited(ctx, Alone, changeOf("review-item.create", auditReviewItem, it.WorkspaceID, &it.ID), func(ctx context.Context, tx *Tx) error {
		if it.ID == "" {
			it.ID = tx.NewID()
		}
		it.Status, it.Annotation = review.StatusPending, nil
		it.CreatedAt, it.UpdatedAt = tx.Now, tx.Now
		_, err := tx.Exec(ctx, qInsertReviewItem, it.ID, it.WorkspaceID, it.RunID, it.PromptID, it.VersionID,
			it.Source, it.Status, it.CreatedBy, tx.Now, tx.Now)
		return err
	})
}

// GetReviewItem returns an item of the workspace.
func (s *Store) GetReviewItem(ctx context.Context, workspaceID, id string) (*review.Item, error) {
	return getOne(ctx, s, "review item", scanReviewItem,
		`SELECT `+reviewCols+` FROM review_items i WHERE i.workspace_id = ? AND i.id = ?`, workspaceID, id)
}

// ListReviewItems returns one page of the items f selects, newest first
// (the id, a version 7 UUID or a random one, breaks ties), and how many it
// selects in all.
func (s *Store) ListReviewItems(ctx context.Context, f review.Filter) ([]*review.Item, int, error) {
	where := `i.workspace_id = ?`
	args := []any{f.WorkspaceID}
	for _, c := range []struct{ col, v string }{{"i.canvas_id", f.CanvasID}, {"i.version_id", f.VersionID},
		{"i.status", f.Status}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	where += ` AND ` + s.d.reachSQL(&args, `i.canvas_id`, f.Scope)
	return listPage(ctx, s, listQuery{cols: reviewCols, from: `review_items i`, where: where, args: args,
		order: `i.created_at DESC, i.id DESC`, limit: f.Limit, offset: f.Offset},
		func(r Rows) (*review.Item, error) { return scanReviewItem(r) })
}

// AnnotateReviewItem sets an item's annotation and status reviewed, and
// returns the item as written.
func (s *Store) AnnotateReviewItem(ctx context.Context, p review.AnnotateParams) (*review.Item, error) {
	var it *review.Item
	a := p.Annotation
	err := s.writeAudited(ctx, Alone, changeOf("review-item.annotate", auditReviewItem, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE review_items SET status = ?, passed = ?, score = ?, comment = ?,
			annotated_by = ?, annotated_at = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
			review.StatusReviewed, a.Passed, a.Score, a.Comment, a.AnnotatedBy, tx.Now, tx.Now, p.WorkspaceID, p.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return canvas.NotFound("review item")
		}
		it, err = scanReviewItem(tx.QueryRow(ctx, `SELECT `+reviewCols+` FROM review_items i
			WHERE i.workspace_id = ? AND i.id = ?`, p.WorkspaceID, p.ID))
		return err
	})
	return it, err
}

// ReviewStats counts a canvas's items per version in one query, the
// versions with the most recent items first. AVG of no score is NULL.
func (s *Store) ReviewStats(ctx context.Context, workspaceID, canvasID string) ([]*review.VersionStats, error) {
	var out []*review.VersionStats
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, `SELECT version_id,
			CAST(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS BIGINT),
			CAST(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS BIGINT),
			CAST(SUM(CASE WHEN status = ? AND passed THEN 1 ELSE 0 END) AS BIGINT),
			CAST(SUM(CASE WHEN status = ? AND NOT passed THEN 1 ELSE 0 END) AS BIGINT),
			AVG(CASE WHEN status = ? THEN score END)
			FROM review_items WHERE workspace_id = ? AND canvas_id = ?
			GROUP BY version_id ORDER BY MAX(created_at) DESC, version_id`,
			review.StatusPending, review.StatusReviewed, review.StatusReviewed, review.StatusReviewed,
			review.StatusReviewed, workspaceID, canvasID)
		out, err = RowsOf(rows, err, func(r Rows) (*review.VersionStats, error) {
			var v review.VersionStats
			err := r.Scan(&v.VersionID, &v.Pending, &v.Reviewed, &v.Good, &v.Bad, &v.MeanScore)
			return &v, err
		})
		return err
	})
	return out, err
}
