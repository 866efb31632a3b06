package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// pubCols are the columns scanPublication reads, in order, from
// publications p joined with environments e and versions v.
const pubCols = `p.id, p.environment_id, e.name, e.is_system, p.version_id, v.canvas_id, v.title,
	v.draft, v.origin_version_id, v.version_index, v.created_by, v.updated_by, v.created_at,
	v.updated_at, p.published_at, p.published_by, p.unpublished_at, p.is_active, p.seq, ` + promotedExpr

const pubFrom = ` FROM publications p JOIN environments e ON e.id = p.environment_id JOIN versions v ON v.id = p.version_id`

func scanPublication(r interface{ Scan(...any) error }) (*env.Publication, error) {
	var p env.Publication
	var promoted, draft bool
	err := r.Scan(&p.PublicationID, &p.EnvironmentID, &p.EnvironmentName, &p.EnvironmentIsSystem,
		&p.VersionID, &p.PromptID, &p.Title, &draft, &p.OriginVersionID, &p.VersionIndex, &p.CreatedBy,
		&p.UpdatedBy, nullTimeCol{&p.CreatedAt}, nullTimeCol{&p.UpdatedAt}, timeCol{&p.PublishedAt},
		&p.PublishedBy, nullTimeCol{&p.UnpublishedAt}, &p.IsActive, &p.Seq, &promoted)
	p.Promoted, p.Draft = &promoted, &draft
	return &p, err
}

// Statements of the publish path and the history, prepared at Open.
const (
	qVersionOfCanvas = `SELECT EXISTS (SELECT 1 FROM versions WHERE id = ? AND canvas_id = ? AND deleted_at IS NULL)`
	qActivePub       = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = ? AND p.is_active`
	qPubPage         = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = ? AND p.seq BETWEEN ? AND ? ORDER BY p.seq DESC`
	qCloseActive     = `UPDATE publications SET is_active = 0, unpublished_at = ? WHERE environment_id = ? AND is_active`
	qNextSeq         = `UPDATE environments SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq`
	qInsertPub       = `INSERT INTO publications (id, environment_id, version_id, seq, is_active, published_at, published_by)
		VALUES (?, ?, ?, ?, 1, ?, ?)`
	qLastSeq = `SELECT e.last_seq` + liveEnv + ` AND e.id = ?`
	// qSubscribed says whether an application of the canvas receives
	// events of a type: webhook.Takes, in SQL.
	qSubscribed = `SELECT EXISTS (SELECT 1 FROM applications a WHERE a.workspace_id = ? AND a.prompt_id = ?
		AND a.events_enabled AND a.events_url <> '' AND (json_array_length(a.events_types) = 0
		OR EXISTS (SELECT 1 FROM json_each(a.events_types) WHERE value = ?)))`
	// qPublishedVersion reads what a new publication shows of its version:
	// no row when the version is not a live version of the canvas.
	qPublishedVersion = `SELECT v.title, v.draft, v.origin_version_id, v.version_index, v.created_by,
		v.updated_by, v.created_at, v.updated_at, ` + promotedExpr + `
		FROM versions v WHERE v.id = ? AND v.canvas_id = ? AND v.deleted_at IS NULL`
)

// publishTx makes p.VersionID the active publication of the environment
// inside tx; Publish and UpdateVersion's promotion both take this step.
// Production is created on demand; the replaced publication is closed with
// unpublishedAt; the new one takes the environment's next Seq, and the job
// of p.Event for it is written with it when a subscription takes it. When the version is already
// active nothing changes and created is false.
func publishTx(ctx context.Context, tx *Tx, p env.PublishParams) (*env.Publication, bool, error) {
	e, err := ensureEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.EnvName)
	if err != nil {
		return nil, false, err
	}
	// The new publication is built from what the transaction reads and
	// writes: reading it back would cost the publish a joined query more.
	pub := &env.Publication{EnvironmentID: e.ID, EnvironmentName: e.Name, EnvironmentIsSystem: e.IsSystem,
		VersionID: p.VersionID, PromptID: p.CanvasID, PublishedBy: p.By, IsActive: true}
	var promoted, draft bool
	err = tx.queryRow(ctx, qPublishedVersion, p.VersionID, p.CanvasID).Scan(&pub.Title, &draft,
		&pub.OriginVersionID, &pub.VersionIndex, &pub.CreatedBy, &pub.UpdatedBy, nullTimeCol{&pub.CreatedAt},
		nullTimeCol{&pub.UpdatedAt}, &promoted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, canvas.NotFound("version")
	} else if err != nil {
		return nil, false, err
	}
	if e.ActiveVersionID != nil && *e.ActiveVersionID == p.VersionID {
		pub, err := scanPublication(tx.queryRow(ctx, qActivePub, e.ID))
		return pub, false, err
	}
	now := formatTime(tx.now)
	if pub.PublishedAt, err = parseTime(now); err != nil {
		return nil, false, err
	}
	if _, err := tx.exec(ctx, qCloseActive, now, e.ID); err != nil {
		return nil, false, err
	}
	if err := tx.queryRow(ctx, qNextSeq, e.ID).Scan(&pub.Seq); err != nil {
		return nil, false, err
	}
	pub.PublicationID = tx.db.NewID()
	if _, err := tx.exec(ctx, qInsertPub, pub.PublicationID, e.ID, p.VersionID, pub.Seq, now, p.By); err != nil {
		return nil, false, translate(err)
	}
	// Publishing to production promotes the version; elsewhere it stays as
	// production has it.
	promoted = promoted || (e.IsSystem && e.Name == env.Production)
	pub.Promoted, pub.Draft = &promoted, &draft
	if err := writePublishEvent(ctx, tx, p, pub); err != nil {
		return nil, false, err
	}
	return pub, true, nil
}

// unpublishProduction ends the production publication of a canvas when
// versionID is its active version; otherwise it does nothing.
func unpublishProduction(ctx context.Context, tx *Tx, canvasID, versionID string) error {
	_, err := tx.exec(ctx, `UPDATE publications SET is_active = 0, unpublished_at = ?
		WHERE is_active AND version_id = ? AND environment_id IN
		(SELECT id FROM environments WHERE canvas_id = ? AND name = ? AND is_system)`,
		formatTime(tx.now), versionID, canvasID, env.Production)
	return err
}

// ListPublications returns one page of an environment's history, newest
// first, and its length. Seqs run 1..last_seq without gaps, so the page is
// the Seq range [total-offset-limit+1, total-offset], read through the
// (environment_id, seq) index: a deep page costs what the first one does.
func (db *DB) ListPublications(ctx context.Context, workspaceID, envID string, limit, offset int) ([]*env.Publication, int, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var total int
	err = tx.queryRow(ctx, qLastSeq, workspaceID, envID).Scan(&total)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, canvas.NotFound("environment")
	} else if err != nil {
		return nil, 0, err
	}
	offset = max(offset, 0)
	if limit <= 0 || offset >= total {
		return []*env.Publication{}, total, nil
	}
	hi := total - offset
	lo := max(hi-limit+1, 1)
	rows, err := tx.query(ctx, qPubPage, envID, lo, hi)
	list, err := rowsOf(rows, err, func(r *sql.Rows) (*env.Publication, error) { return scanPublication(r) })
	return list, total, err
}

// writePublishEvent writes the job of p.Event for the new publication pub
// when a subscription of the canvas takes the event: decided here, in the
// publish's transaction, so that a subscription committed before the
// publish receives it and the transaction waits for nothing else.
func writePublishEvent(ctx context.Context, tx *Tx, p env.PublishParams, pub *env.Publication) error {
	if p.Event == nil {
		return nil
	}
	var taken bool
	if err := tx.queryRow(ctx, qSubscribed, p.WorkspaceID, p.CanvasID, p.Event.Type).Scan(&taken); err != nil || !taken {
		return err
	}
	job, err := p.Event.Job(pub)
	if err != nil || job == nil {
		return err
	}
	return insertJob(ctx, tx, job)
}
