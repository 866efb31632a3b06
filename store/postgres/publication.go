package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// pubCols are the columns scanPublication reads, in order, from
// publications p joined with environments e and versions v.
const pubCols = `p.id, p.environment_id, e.name, e.is_system, p.version_id, v.canvas_id, v.title,
	v.draft, v.origin_version_id, v.version_index, v.created_by, v.updated_by, v.created_at,
	v.updated_at, p.published_at, p.published_by, p.unpublished_at, p.is_active, p.seq, ` + promotedExpr

const pubFrom = ` FROM publications p JOIN environments e ON e.id = p.environment_id JOIN versions v ON v.id = p.version_id`

func scanPublication(r scanner) (*env.Publication, error) {
	var p env.Publication
	var promoted, draft bool
	err := r.Scan(&p.PublicationID, &p.EnvironmentID, &p.EnvironmentName, &p.EnvironmentIsSystem,
		&p.VersionID, &p.PromptID, &p.Title, &draft, &p.OriginVersionID, &p.VersionIndex, &p.CreatedBy,
		&p.UpdatedBy, &p.CreatedAt, &p.UpdatedAt, &p.PublishedAt,
		&p.PublishedBy, &p.UnpublishedAt, &p.IsActive, &p.Seq, &promoted)
	p.Promoted, p.Draft = &promoted, &draft
	return &p, err
}

// Statements of the publish path and the history.
const (
	// qVersionOfCanvas reads a live version of a canvas FOR SHARE, so that
	// it cannot be deleted (DeleteVersion locks it FOR UPDATE) before the
	// publication that names it commits.
	qVersionOfCanvas = `SELECT EXISTS (SELECT 1 FROM versions WHERE id = $1 AND canvas_id = $2 AND deleted_at IS NULL FOR SHARE)`
	// qLockEnv locks an environment's row: publishes of one environment
	// take turns from here to their commit.
	qLockEnv     = `SELECT id FROM environments WHERE id = $1 FOR UPDATE`
	qActiveOf    = `SELECT version_id FROM publications WHERE environment_id = $1 AND is_active`
	qActivePub   = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = $1 AND p.is_active`
	qPubByID     = `SELECT ` + pubCols + pubFrom + ` WHERE p.id = $1`
	qPubPage     = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = $1 AND p.seq BETWEEN $2 AND $3 ORDER BY p.seq DESC`
	qCloseActive = `UPDATE publications SET is_active = false, unpublished_at = $1 WHERE environment_id = $2 AND is_active`
	qNextSeq     = `UPDATE environments SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq`
	qInsertPub   = `INSERT INTO publications (id, environment_id, version_id, seq, is_active, published_at, published_by)
		VALUES ($1, $2, $3, $4, true, $5, $6)`
	qLastSeq = `SELECT e.last_seq` + liveEnv + ` AND e.id = $2`
	// qSubscribed says whether an application of the canvas receives
	// events of a type: webhook.Takes, in SQL.
	qSubscribed = `SELECT EXISTS (SELECT 1 FROM applications a WHERE a.workspace_id = $1 AND a.prompt_id = $2
		AND a.events_enabled AND a.events_url <> '' AND (jsonb_array_length(a.events_types::jsonb) = 0
		OR a.events_types::jsonb @> jsonb_build_array($3::text)))`
)

// Publish makes the version the active publication of the environment: the
// replaced publication gets unpublishedAt and the new one the next Seq.
// When the version is already active nothing changes and created is false.
// The version must be a live version of the canvas, and a custom
// environment must exist. The job of p.Event is written in the same
// transaction when a subscription takes it, so it commits with the
// publication.
func (db *DB) Publish(ctx context.Context, p env.PublishParams) (*env.Publication, bool, error) {
	var pub *env.Publication
	var created bool
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		pub, created, err = publishTx(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return pub, created, nil
}

// publishTx makes p.VersionID the active publication of the environment
// inside tx; Publish and UpdateVersion's promotion both take this step.
// Production is created on demand. The environment's row is locked before
// the active publication is read, so that of two publishes at once, in any
// processes, the second sees what the first committed: one active
// publication, and Seqs without gaps. The replaced publication is closed
// with unpublishedAt; the new one takes the environment's next Seq, and the
// job of p.Event for it is written with it when a subscription takes it. When the version is
// already active nothing changes and created is false.
func publishTx(ctx context.Context, tx *Tx, p env.PublishParams) (*env.Publication, bool, error) {
	e, err := ensureEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.EnvName)
	if err != nil {
		return nil, false, err
	}
	// The version first, then the environment: UpdateVersion holds its
	// version's row when it promotes, so this order never waits in a
	// circle with it.
	var ok bool
	if err := tx.QueryRow(ctx, qVersionOfCanvas, p.VersionID, p.CanvasID).Scan(&ok); err != nil {
		return nil, false, err
	} else if !ok {
		return nil, false, canvas.NotFound("version")
	}
	var locked string
	if err := tx.QueryRow(ctx, qLockEnv, e.ID).Scan(&locked); errors.Is(err, pgx.ErrNoRows) {
		return nil, false, canvas.NotFound("environment") // deleted meanwhile
	} else if err != nil {
		return nil, false, err
	}
	// Read after the lock: a statement of READ COMMITTED sees every
	// publish committed before it began.
	var active string
	if err := tx.QueryRow(ctx, qActiveOf, e.ID).Scan(&active); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, err
	}
	if active == p.VersionID {
		pub, err := scanPublication(tx.QueryRow(ctx, qActivePub, e.ID))
		return pub, false, err
	}
	if _, err := tx.Exec(ctx, qCloseActive, tx.now, e.ID); err != nil {
		return nil, false, err
	}
	var seq int64
	if err := tx.QueryRow(ctx, qNextSeq, e.ID).Scan(&seq); err != nil {
		return nil, false, err
	}
	id := tx.db.NewID()
	if _, err := tx.Exec(ctx, qInsertPub, id, e.ID, p.VersionID, seq, tx.now, p.By); err != nil {
		return nil, false, translate(err)
	}
	pub, err := scanPublication(tx.QueryRow(ctx, qPubByID, id))
	if err != nil {
		return nil, false, err
	}
	if err := writePublishEvent(ctx, tx, p, pub); err != nil {
		return nil, false, err
	}
	return pub, true, nil
}

// unpublishProduction ends the production publication of a canvas when
// versionID is its active version; otherwise it does nothing. It locks
// production's row first, as a publish does.
func unpublishProduction(ctx context.Context, tx *Tx, canvasID, versionID string) error {
	var envID string
	err := tx.QueryRow(ctx, `SELECT id FROM environments WHERE canvas_id = $1 AND name = $2 AND is_system FOR UPDATE`,
		canvasID, env.Production).Scan(&envID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE publications SET is_active = false, unpublished_at = $1
		WHERE is_active AND version_id = $2 AND environment_id = $3`, tx.now, versionID, envID)
	return err
}

// ListPublications returns one page of an environment's history, newest
// first, and its length. Seqs run 1..last_seq without gaps, so the page is
// the Seq range [total-offset-limit+1, total-offset], read through the
// (environment_id, seq) index: a deep page costs what the first one does.
func (db *DB) ListPublications(ctx context.Context, workspaceID, envID string, limit, offset int) ([]*env.Publication, int, error) {
	var list []*env.Publication
	var total int
	err := db.read(ctx, func(tx *Tx) error {
		err := tx.QueryRow(ctx, qLastSeq, workspaceID, envID).Scan(&total)
		if errors.Is(err, pgx.ErrNoRows) {
			return canvas.NotFound("environment")
		} else if err != nil {
			return err
		}
		offset = max(offset, 0)
		if limit <= 0 || offset >= total {
			list = []*env.Publication{}
			return nil
		}
		hi := total - offset
		lo := max(hi-limit+1, 1)
		rows, err := tx.Query(ctx, qPubPage, envID, lo, hi)
		list, err = rowsOf(rows, err, func(r pgx.Rows) (*env.Publication, error) { return scanPublication(r) })
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// writePublishEvent writes the job of p.Event for the new publication pub
// when a subscription of the canvas takes the event: decided here, in the
// publish's transaction, so that a subscription committed before the
// publish receives it and the transaction, which holds the environment's
// lock, waits for no other connection.
func writePublishEvent(ctx context.Context, tx *Tx, p env.PublishParams, pub *env.Publication) error {
	if p.Event == nil {
		return nil
	}
	var taken bool
	if err := tx.QueryRow(ctx, qSubscribed, p.WorkspaceID, p.CanvasID, p.Event.Type).Scan(&taken); err != nil || !taken {
		return err
	}
	job, err := p.Event.Job(pub)
	if err != nil || job == nil {
		return err
	}
	return insertJob(ctx, tx, job)
}
