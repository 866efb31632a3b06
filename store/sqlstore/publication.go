package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// pubCols are the columns scanPublication reads, in order, from
// publications p joined with environments e and versions v.
const pubCols = `p.id, p.environment_id, e.name, e.is_system, p.version_id, v.canvas_id, v.title,
	v.draft, v.origin_version_id, v.version_index, v.created_by, v.updated_by, v.created_at,
	v.updated_at, p.published_at, p.published_by, p.unpublished_at, p.is_active, p.seq, ` + promotedExpr + `, p.split`

const pubFrom = ` FROM publications p JOIN environments e ON e.id = p.environment_id JOIN versions v ON v.id = p.version_id`

func scanPublication(r Row) (*env.Publication, error) {
	var p env.Publication
	var promoted, draft bool
	err := r.Scan(&p.PublicationID, &p.EnvironmentID, &p.EnvironmentName, &p.EnvironmentIsSystem,
		&p.VersionID, &p.PromptID, &p.Title, &draft, &p.OriginVersionID, &p.VersionIndex, &p.CreatedBy,
		&p.UpdatedBy, &p.CreatedAt, &p.UpdatedAt, &p.PublishedAt,
		&p.PublishedBy, &p.UnpublishedAt, &p.IsActive, &p.Seq, &promoted, jsonCol{&p.Split})
	p.Promoted, p.Draft = &promoted, &draft
	return &p, err
}

// Statements of the publish path and the history.
const (
	// qPublishedVersion reads what a new publication shows of its version:
	// no row when the version is not a live version of the canvas. A
	// publish reads it FOR SHARE (Dialect.ForShare), so that the version
	// cannot be deleted (DeleteVersion locks it FOR UPDATE) before the
	// publication that names it commits.
	qPublishedVersion = `SELECT v.title, v.draft, v.origin_version_id, v.version_index, v.created_by,
		v.updated_by, v.created_at, v.updated_at, ` + promotedExpr + `
		FROM versions v WHERE v.id = ? AND v.canvas_id = ? AND v.deleted_at IS NULL`
	// qLockEnv locks an environment's row (Dialect.ForUpdate) and reads
	// whether it is protected: publishes of one environment, and changes
	// of its policy, take turns from here to their commit.
	qLockEnv   = `SELECT protected FROM environments WHERE id = ?`
	qActivePub = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = ? AND p.is_active`
	// qCloseOther closes the active publication of an environment unless
	// it is of the version and the split (its JSON text, '' for none)
	// bound to the last two parameters.
	qCloseOther = `UPDATE publications SET is_active = false, unpublished_at = ?
		WHERE environment_id = ? AND is_active AND NOT (version_id = ? AND COALESCE(split, '') = ?)`
	// qSplitVersion reads an entry of a split as qPublishedVersion reads
	// the first: no row unless it is a live version of the canvas.
	qSplitVersion = `SELECT v.id FROM versions v WHERE v.id = ? AND v.canvas_id = ? AND v.deleted_at IS NULL`
	qPubPage      = `SELECT ` + pubCols + pubFrom + ` WHERE p.environment_id = ? AND p.seq BETWEEN ? AND ? ORDER BY p.seq DESC`
	qNextSeq      = `UPDATE environments SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq`
	qInsertPub    = `INSERT INTO publications (id, environment_id, version_id, seq, is_active, published_at, published_by, split)
		VALUES (?, ?, ?, ?, true, ?, ?, ?)`
	qLastSeq = `SELECT e.last_seq` + liveEnv + ` AND e.id = ?`
)

// qSubscribed says whether an application of the canvas receives events
// of a type: webhook.Takes, in SQL.
func (d Dialect) qSubscribed() string {
	return `SELECT EXISTS (SELECT 1 FROM applications a WHERE a.workspace_id = ? AND a.prompt_id = ?
		AND a.events_enabled AND a.events_url <> '' AND (` + d.JSONArrayEmpty("a.events_types") + `
		OR ` + d.JSONArrayHas("a.events_types") + `))`
}

// HotCanvasQueries are the SQLite texts of the statements of canvases,
// versions, environments and publications that run on every call of a hot
// path: writes, those of a publish and of a version's origin check;
// reads, those of a history page, a version read and the canvas and
// environment lookups every environment read starts with. The SQLite
// driver prepares them at Open.
func HotCanvasQueries() (writes, reads []string) {
	d := SQLite
	writes = []string{qFindEnv, qPublishedVersion + d.ForShare(), qLockEnv + d.ForUpdate(), qCloseOther, qNextSeq, qInsertPub, d.qSubscribed(), d.qVersionOfCanvas()}
	reads = []string{qLastSeq, qPubPage, versionsQuery(versionByID), d.qMessagesOfVersions(), qCanvasByID, qFindEnv}
	return writes, reads
}

// Publish makes the version, or the split, the active publication of the
// environment: the replaced publication gets unpublishedAt and the new one
// the next Seq. When the same version and split are already active nothing
// changes and created is false. The version must be a live version of the
// canvas (NOT_FOUND otherwise); a split must pass env.CheckSplit and each
// of its versions be a live version of the canvas (VALIDATION at each
// entry that is not). A custom environment must exist. The job of p.Event,
// when a subscription takes it, is written in the publish's transaction,
// so it commits with the publication, and a publish that fails writes
// neither. Publishes share commits where the driver groups them (SQLite's
// group commit: one commit per publish would cap publishing at the disk's
// commit rate); each returns only once its publication is durable.
func (s *Store) Publish(ctx context.Context, p env.PublishParams) (*env.Publication, bool, error) {
	if p.Split != nil {
		if err := env.CheckSplit(p.Split); err != nil {
			return nil, false, err
		}
		p.VersionID = p.Split[0].VersionID
	}
	var pub *env.Publication
	var created bool
	err := s.write(ctx, Publishes, func(ctx context.Context, tx *Tx) error {
		// The audit event is the environment's, before and after, as the
		// publish saw it: before as it found the environment, before it
		// takes the environment's lock; after serving what the lock let it
		// publish (or found active).
		var envID string
		var seen publishSeen
		c := changeOf("environment.publish", auditEnvironment, p.WorkspaceID, &envID)
		c.known = seen.states
		return s.audited(ctx, tx, c, func() error {
			var err error
			pub, created, err = s.publishTxSeen(ctx, tx, p, false, &seen)
			if err == nil {
				envID, seen.pub = pub.EnvironmentID, pub
			}
			return err
		})
	})
	if err != nil {
		return nil, false, err
	}
	return pub, created, nil
}

// publishTx makes p.VersionID (with p.Split, a checked split whose first
// entry it is) the active publication of the environment inside tx;
// Publish, UpdateVersion's promotion and the approval that publishes a
// publication request all take this step, and only the last passes
// approved. A protected environment refuses any other publish that would
// change it (APPROVAL_REQUIRED), decided after its row is locked, so that
// no publish slips in beside a change of its policy.
// Production is created on demand. The environment's row is locked
// (Dialect.ForUpdate) before the active publication is read, so that of two
// publishes at once, in any processes, the second sees what the first
// committed: one active publication, and Seqs without gaps (on SQLite the
// one writer does the same). The replaced publication is closed with
// unpublishedAt; the new one takes the environment's next Seq, and the job
// of p.Event for it is written with it when a subscription takes it. When
// the version and split are already active nothing changes and created is
// false.
func (s *Store) publishTx(ctx context.Context, tx *Tx, p env.PublishParams, approved bool) (*env.Publication, bool, error) {
	return s.publishTxSeen(ctx, tx, p, approved, &publishSeen{})
}

// publishTxSeen is publishTx that tells seen what it saw of the
// environment.
func (s *Store) publishTxSeen(ctx context.Context, tx *Tx, p env.PublishParams, approved bool, seen *publishSeen) (*env.Publication, bool, error) {
	var splitText any
	splitKey := ""
	if p.Split != nil {
		b, err := json.Marshal(p.Split)
		if err != nil {
			return nil, false, err
		}
		splitKey = string(b)
		splitText = splitKey
	}
	e, err := findEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.EnvName)
	seen.before = e
	if err == nil && e == nil {
		e, err = ensureEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.EnvName)
	}
	if err != nil {
		return nil, false, err
	}
	seen.env = e
	// The new publication is built from what the transaction reads and
	// writes: reading it back would cost the publish a joined query more.
	pub := &env.Publication{EnvironmentID: e.ID, EnvironmentName: e.Name, EnvironmentIsSystem: e.IsSystem,
		VersionID: p.VersionID, PromptID: p.CanvasID, PublishedBy: p.By, IsActive: true, Split: p.Split}
	// The versions first, then the environment: UpdateVersion holds its
	// version's row when it promotes, so this order never waits in a
	// circle with it.
	var promoted, draft bool
	err = tx.QueryRow(ctx, qPublishedVersion+s.d.ForShare(), p.VersionID, p.CanvasID).Scan(&pub.Title, &draft,
		&pub.OriginVersionID, &pub.VersionIndex, &pub.CreatedBy, &pub.UpdatedBy, &pub.CreatedAt,
		&pub.UpdatedAt, &promoted)
	if errors.Is(err, ErrNoRows) && p.Split == nil {
		return nil, false, canvas.NotFound("version")
	} else if err != nil && !errors.Is(err, ErrNoRows) {
		return nil, false, err
	}
	if p.Split != nil {
		if err := s.lockSplit(ctx, tx, p, errors.Is(err, ErrNoRows)); err != nil {
			return nil, false, err
		}
	}
	// Whether a subscription takes the event is read before the lock, so
	// that the lock is held for the fewest statements.
	taken, err := s.subscribed(ctx, tx, p)
	if err != nil {
		return nil, false, err
	}
	var protected bool
	if err := tx.QueryRow(ctx, qLockEnv+s.d.ForUpdate(), e.ID).Scan(&protected); errors.Is(err, ErrNoRows) {
		return nil, false, canvas.NotFound("environment") // deleted meanwhile
	} else if err != nil {
		return nil, false, err
	}
	if protected && !approved {
		// Publishing the version a protected environment already serves
		// changes nothing, and so needs no approval.
		active, err := scanPublication(tx.QueryRow(ctx, qActivePub, e.ID))
		if err == nil && active.VersionID == p.VersionID && slices.Equal(active.Split, p.Split) {
			return active, false, nil
		} else if err != nil && !errors.Is(err, ErrNoRows) {
			return nil, false, err
		}
		return nil, false, canvas.ApprovalRequired(e.Name)
	}
	// After the lock, a statement of READ COMMITTED sees every publish
	// committed before it began. The active publication of another version
	// or split is closed; when none was, it may be active already.
	closed, err := tx.Exec(ctx, qCloseOther, tx.Now, e.ID, p.VersionID, splitKey)
	if err != nil {
		return nil, false, err
	} else if closed == 0 {
		active, err := scanPublication(tx.QueryRow(ctx, qActivePub, e.ID))
		if err == nil {
			return active, false, nil
		} else if !errors.Is(err, ErrNoRows) {
			return nil, false, err
		}
	}
	if err := tx.QueryRow(ctx, qNextSeq, e.ID).Scan(&pub.Seq); err != nil {
		return nil, false, err
	}
	pub.PublicationID, pub.PublishedAt = tx.NewID(), tx.Now
	if _, err := tx.Exec(ctx, qInsertPub, pub.PublicationID, e.ID, p.VersionID, pub.Seq, tx.Now, p.By, splitText); err != nil {
		return nil, false, err
	}
	// Publishing to production promotes the version; elsewhere it stays as
	// production has it.
	promoted = promoted || (e.IsSystem && e.Name == env.Production)
	pub.Promoted, pub.Draft = &promoted, &draft
	if taken {
		if err := s.writePublishEvent(ctx, tx, p, pub); err != nil {
			return nil, false, err
		}
	}
	return pub, true, nil
}

// lockSplit reads the entries of p.Split after the first FOR SHARE, as
// the first was read, so that none can be deleted before the publication
// commits; firstMissing says that the first was not a live version. Every
// entry that is not a live version of the canvas is VALIDATION at its
// pointer.
func (s *Store) lockSplit(ctx context.Context, tx *Tx, p env.PublishParams, firstMissing bool) error {
	var details []canvas.Detail
	missing := func(i int) {
		details = append(details, canvas.Detail{Path: fmt.Sprintf("/json/split/%d/versionId", i),
			Message: "must be a live version of the canvas"})
	}
	if firstMissing {
		missing(0)
	}
	for i, en := range p.Split[1:] {
		var id string
		err := tx.QueryRow(ctx, qSplitVersion+s.d.ForShare(), en.VersionID, p.CanvasID).Scan(&id)
		if errors.Is(err, ErrNoRows) {
			missing(i + 1)
		} else if err != nil {
			return err
		}
	}
	if len(details) > 0 {
		return canvas.Invalid("The split names versions that cannot be published.", details...)
	}
	return nil
}

// subscribed says whether a subscription of the canvas takes p.Event
// (false without one): decided in the publish's transaction, so that a
// subscription committed before the publish receives it and the
// transaction waits for no other connection.
func (s *Store) subscribed(ctx context.Context, tx *Tx, p env.PublishParams) (bool, error) {
	if p.Event == nil {
		return false, nil
	}
	var taken bool
	err := tx.QueryRow(ctx, s.d.qSubscribed(), p.WorkspaceID, p.CanvasID, p.Event.Type).Scan(&taken)
	return taken, err
}

// writePublishEvent writes the job of p.Event for the new publication pub.
func (s *Store) writePublishEvent(ctx context.Context, tx *Tx, p env.PublishParams, pub *env.Publication) error {
	job, err := p.Event.Job(pub)
	if err != nil || job == nil {
		return err
	}
	return s.insertJob(ctx, tx, job)
}

// unpublishProduction ends the production publication of a canvas when
// versionID is its active version; otherwise it does nothing. It locks
// production's row first, as a publish does; a protected production that
// serves the version is APPROVAL_REQUIRED (production moves only through
// approved requests).
func (s *Store) unpublishProduction(ctx context.Context, tx *Tx, canvasID, versionID string) error {
	var envID string
	var protected bool
	err := tx.QueryRow(ctx, `SELECT id, protected FROM environments WHERE canvas_id = ? AND name = ? AND is_system`+s.d.ForUpdate(),
		canvasID, env.Production).Scan(&envID, &protected)
	if errors.Is(err, ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE publications SET is_active = false, unpublished_at = ?
		WHERE is_active AND version_id = ? AND environment_id = ?`, tx.Now, versionID, envID)
	if err == nil && n > 0 && protected {
		return canvas.ApprovalRequired(env.Production)
	}
	return err
}

// GetPublication returns a publication of the environment envID of a live
// canvas of the workspace.
func (s *Store) GetPublication(ctx context.Context, workspaceID, envID, id string) (*env.Publication, error) {
	return getOne(ctx, s, "publication", scanPublication, `SELECT `+pubCols+pubFrom+`
		JOIN canvases c ON c.id = e.canvas_id
		WHERE c.workspace_id = ? AND c.deleted_at IS NULL AND p.environment_id = ? AND p.id = ?`,
		workspaceID, envID, id)
}

// ListPublications returns one page of an environment's history, newest
// first, and its length. Seqs run 1..last_seq without gaps, so the page is
// the Seq range [total-offset-limit+1, total-offset], read through the
// (environment_id, seq) index: a deep page costs what the first one does.
func (s *Store) ListPublications(ctx context.Context, workspaceID, envID string, limit, offset int) ([]*env.Publication, int, error) {
	var list []*env.Publication
	var total int
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		err := tx.QueryRow(ctx, qLastSeq, workspaceID, envID).Scan(&total)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("environment")
		} else if err != nil {
			return err
		}
		offset := max(offset, 0)
		if limit <= 0 || offset >= total {
			list = []*env.Publication{}
			return nil
		}
		hi := total - offset
		lo := max(hi-limit+1, 1)
		rows, err := tx.Query(ctx, qPubPage, envID, lo, hi)
		list, err = RowsOf(rows, err, func(r Rows) (*env.Publication, error) { return scanPublication(r) })
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// qServedProtected names a protected environment whose active publication
// is the version bound to the parameter, if any.
const qServedProtected = `SELECT e.name FROM publications p JOIN environments e ON e.id = p.environment_id
	WHERE p.version_id = ? AND p.is_active AND e.protected ORDER BY e.name LIMIT 1`

// lockEditable locks a version's row (Dialect.ForUpdate) and refuses a
// change of its content (messages, variables, configuration) while a
// protected environment serves it: APPROVAL_REQUIRED, since the change
// would alter what that environment serves without an approved request.
// A publish reads the version FOR SHARE, so after the lock the check sees
// every publish of it that committed, and none commits before the edit
// does.
func (s *Store) lockEditable(ctx context.Context, tx *Tx, versionID string) error {
	var id string
	if err := tx.QueryRow(ctx, `SELECT id FROM versions WHERE id = ?`+s.d.ForUpdate(), versionID).Scan(&id); errors.Is(err, ErrNoRows) {
		return canvas.NotFound("version")
	} else if err != nil {
		return err
	}
	var name string
	err := tx.QueryRow(ctx, qServedProtected, versionID).Scan(&name)
	if errors.Is(err, ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	return canvas.Errorf(canvas.EAPPROVALREQUIRED, "The version is served by the protected %s environment: "+
		"edit a new version and publish it through a publication request (POST /publication-requests).", name)
}
