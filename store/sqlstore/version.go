package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// promotedExpr is true when version v is the active publication of its
// canvas' production environment: promoted and production are one fact.
const promotedExpr = `EXISTS (SELECT 1 FROM publications pp JOIN environments pe ON pe.id = pp.environment_id
	WHERE pp.version_id = v.id AND pp.is_active AND pe.is_system AND pe.name = 'production')`

// versionCols are the columns scanVersion reads, in order, from versions v
// joined with canvases c.
const versionCols = `v.id, v.canvas_id, v.title, v.title_locked, v.configuration, v.variables, v.draft,
	v.origin_version_id, c.workspace_id, v.workflow_spec, v.graph, v.is_workflow, v.created_by,
	v.updated_by, v.deleted_by, v.created_at, v.updated_at, v.deleted_at, v.version_index,
	c.custom_tags, ` + promotedExpr

func scanVersion(r Row) (*canvas.Version, error) {
	var v canvas.Version
	err := r.Scan(&v.ID, &v.PromptID, &v.Title, &v.TitleLocked, jsonCol{&v.Configuration}, jsonCol{&v.Variables},
		&v.Draft, &v.OriginVersionID, &v.WorkspaceID, rawCol{&v.WorkflowSpec}, rawCol{&v.Graph}, &v.IsWorkflow,
		&v.CreatedBy, &v.UpdatedBy, &v.DeletedBy, &v.CreatedAt, &v.UpdatedAt, &v.DeletedAt, &v.VersionIndex,
		jsonCol{&v.PromptCustomTags}, &v.Promoted)
	v.Variables = orEmpty(v.Variables)
	v.PromptCustomTags = orEmpty(v.PromptCustomTags)
	return &v, err
}

// versionsQuery selects the live versions of live canvases of the
// workspace bound to the first parameter that cond (whose parameters
// follow) selects, in history order.
func versionsQuery(cond string) string {
	return `SELECT ` + versionCols + ` FROM versions v JOIN canvases c ON c.id = v.canvas_id
		WHERE c.workspace_id = ? AND c.deleted_at IS NULL AND v.deleted_at IS NULL AND (` + cond + `)
		ORDER BY v.canvas_id, v.version_index`
}

// qMessagesOfVersions reads the live messages of a list of versions (IDs).
func (d Dialect) qMessagesOfVersions() string {
	return `SELECT ` + messageCols + ` FROM messages m
	WHERE ` + d.InIDs("m.version_id") + ` AND m.deleted_at IS NULL
	ORDER BY m.idx, m.created_at, m.id`
}

// qVersionOfCanvas says whether a version is a live version of a canvas.
// It reads the version FOR SHARE (Dialect.ForShare), so that the version
// cannot be deleted before the row that names it commits.
func (d Dialect) qVersionOfCanvas() string {
	return `SELECT EXISTS (SELECT 1 FROM versions WHERE id = ? AND canvas_id = ? AND deleted_at IS NULL` +
		d.ForShare() + `)`
}

// queryVersions returns the live versions of live canvases of the workspace
// that cond selects, in history order, each with its live messages: two
// queries whatever the number of versions.
func (s *Store) queryVersions(ctx context.Context, tx *Tx, workspaceID, cond string, args ...any) ([]*canvas.Version, error) {
	return s.queryVersionsLimit(ctx, tx, workspaceID, 0, cond, args...)
}

// queryVersionsLimit is queryVersions reading at most limit versions
// (every one for 0).
func (s *Store) queryVersionsLimit(ctx context.Context, tx *Tx, workspaceID string, limit int, cond string, args ...any) ([]*canvas.Version, error) {
	q := versionsQuery(cond)
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := tx.Query(ctx, q, append([]any{workspaceID}, args...)...)
	versions, err := RowsOf(rows, err, func(r Rows) (*canvas.Version, error) { return scanVersion(r) })
	if err != nil || len(versions) == 0 {
		return versions, err
	}
	versionIDs := make(IDs, len(versions))
	byID := make(map[string]*canvas.Version, len(versions))
	for i, v := range versions {
		versionIDs[i] = v.ID
		byID[v.ID] = v
	}
	rows, err = tx.Query(ctx, s.d.qMessagesOfVersions(), versionIDs)
	messages, err := RowsOf(rows, err, func(r Rows) (*canvas.Message, error) { return scanMessage(r) })
	if err != nil {
		return nil, err
	}
	for _, m := range messages {
		v := byID[m.PromptVersionID]
		v.Messages = append(v.Messages, *m)
	}
	for _, v := range versions {
		fillPrompt(v)
	}
	return versions, nil
}

// fillPrompt sets Message to the first message, and Content and
// MarkdownContent from the prompt message, or nil without one.
func fillPrompt(v *canvas.Version) {
	v.Messages = orEmpty(v.Messages)
	v.Message, v.Content, v.MarkdownContent = nil, nil, nil
	if len(v.Messages) > 0 {
		m := v.Messages[0]
		v.Message = &m
	}
	if p := v.Prompt(); p != nil {
		content := p.Content
		v.Content, v.MarkdownContent = &content, p.MarkdownContent
	}
}

// versionByID is the queryVersions condition of getVersion.
const versionByID = "v.id = ?"

// getVersion returns one live version, filled.
func (s *Store) getVersion(ctx context.Context, tx *Tx, workspaceID, id string) (*canvas.Version, error) {
	list, err := s.queryVersions(ctx, tx, workspaceID, versionByID, id)
	if err != nil {
		return nil, err
	} else if len(list) == 0 {
		return nil, canvas.NotFound("version")
	}
	return list[0], nil
}

// CreateVersion inserts v and v.Messages in one transaction into a live
// canvas, assigns v.VersionIndex from the canvas' counter, sets ids (when
// empty) and timestamps, and fills v as GetVersion does. A client-supplied
// message id already in use is CONFLICT; OriginVersionID, when set, must be
// a live version of the same canvas. An empty title becomes "Version N", N
// being the assigned VersionIndex.
func (s *Store) CreateVersion(ctx context.Context, v *canvas.Version) error {
	config, err := json.Marshal(v.Configuration)
	if err != nil {
		return err
	}
	variables, err := jsonText(orEmpty(v.Variables))
	if err != nil {
		return err
	}
	in := *v
	in.Messages = append([]canvas.Message(nil), v.Messages...)
	var created *canvas.Version
	err = s.writeAudited(ctx, Alone, changeOf("prompt-version.create", auditVersion, v.WorkspaceID, &v.ID), func(ctx context.Context, tx *Tx) error {
		*v = in // a retried attempt starts from what the caller gave
		v.Messages = append([]canvas.Message(nil), in.Messages...)
		var index int
		// The canvas's row lock orders concurrent creations.
		err := tx.QueryRow(ctx, `UPDATE canvases SET version_seq = version_seq + 1
			WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL RETURNING version_seq`,
			v.PromptID, v.WorkspaceID).Scan(&index)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("canvas")
		} else if err != nil {
			return err
		}
		if v.OriginVersionID != nil {
			var ok bool
			if err := tx.QueryRow(ctx, s.d.qVersionOfCanvas(), *v.OriginVersionID, v.PromptID).Scan(&ok); err != nil {
				return err
			} else if !ok {
				return canvas.NotFound("origin version")
			}
		}
		if v.ID == "" {
			v.ID = tx.NewID()
		}
		if v.Title == "" {
			v.Title = fmt.Sprintf("Version %d", index)
		}
		if v.UpdatedBy == "" {
			v.UpdatedBy = v.CreatedBy
		}
		if _, err := tx.Exec(ctx, `INSERT INTO versions (id, canvas_id, version_index, title, title_locked,
			configuration, variables, draft, origin_version_id, workflow_spec, graph, is_workflow, created_by,
			updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			v.ID, v.PromptID, index, v.Title, v.TitleLocked, string(config), variables, v.Draft,
			nullString(v.OriginVersionID), nullRaw(v.WorkflowSpec), nullRaw(v.Graph), v.IsWorkflow,
			v.CreatedBy, v.UpdatedBy, tx.Now, tx.Now); err != nil {
			return err
		}
		for i := range v.Messages {
			m := &v.Messages[i]
			m.PromptVersionID = v.ID
			if m.CreatedBy == "" {
				m.CreatedBy = v.CreatedBy
			}
			if err := insertMessage(ctx, tx, m); err != nil {
				return err
			}
		}
		created, err = s.getVersion(ctx, tx, v.WorkspaceID, v.ID)
		return err
	})
	if err != nil {
		return err
	}
	*v = *created
	return nil
}

// GetVersion returns a live version of a live canvas, filled: messages,
// message, content, promoted, versionIndex and promptCustomTags.
func (s *Store) GetVersion(ctx context.Context, workspaceID, id string) (*canvas.Version, error) {
	var v *canvas.Version
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		v, err = s.getVersion(ctx, tx, workspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ListVersions returns the live versions of a live canvas in history order,
// filled as GetVersion fills them.
func (s *Store) ListVersions(ctx context.Context, workspaceID, canvasID string) ([]*canvas.Version, error) {
	var list []*canvas.Version
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		if err := checkCanvas(ctx, tx, workspaceID, canvasID); err != nil {
			return err
		}
		var err error
		list, err = s.queryVersions(ctx, tx, workspaceID, "v.canvas_id = ?", canvasID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// qVersionRow reads the canvas and stored configuration of a live version
// of a live canvas of a workspace.
const qVersionRow = `SELECT v.canvas_id, v.configuration FROM versions v JOIN canvases c ON c.id = v.canvas_id
	WHERE v.id = ? AND c.workspace_id = ? AND c.deleted_at IS NULL AND v.deleted_at IS NULL`

// versionRow returns the canvas and stored configuration of a live version
// of a live canvas of the workspace; lock is appended to the query (a row
// lock clause, or nothing).
func versionRow(ctx context.Context, tx *Tx, workspaceID, id, lock string) (canvasID, config string, err error) {
	err = tx.QueryRow(ctx, qVersionRow+lock, id, workspaceID).Scan(&canvasID, &config)
	if errors.Is(err, ErrNoRows) {
		err = canvas.NotFound("version")
	}
	return canvasID, config, err
}

// UpdateVersion applies upd in one transaction and returns the version.
// ConfigurationPatch is merged into the stored configuration (RFC 7386);
// Messages replaces the live messages (a given id of one of them updates it
// in place, the others are soft-deleted); Content and MarkdownContent then
// write the prompt message, creating it when missing; Promoted true
// publishes the version to production with the same step Publish takes,
// and false ends its production publication when it has one. A change of
// the content (variables, configuration, messages) of a version that a
// protected environment serves is APPROVAL_REQUIRED.
func (s *Store) UpdateVersion(ctx context.Context, p canvas.UpdateVersionParams) (*canvas.Version, error) {
	workspaceID, id, upd, by := p.WorkspaceID, p.ID, p.Update, p.By
	var out *canvas.Version
	err := s.writeAudited(ctx, Alone, changeOf("prompt-version.update", auditVersion, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		canvasID, config, err := versionRow(ctx, tx, workspaceID, id, "")
		if err != nil {
			return err
		}
		var set setList
		set.add("updated_by", by)
		set.add("updated_at", tx.Now)
		if upd.Title != nil {
			set.add("title", *upd.Title)
		}
		if upd.Draft != nil {
			set.add("draft", *upd.Draft)
		}
		if upd.Variables != nil {
			variables, err := jsonText(orEmpty(*upd.Variables))
			if err != nil {
				return err
			}
			set.add("variables", variables)
		}
		if len(upd.ConfigurationPatch) > 0 {
			merged, err := mergeConfiguration(config, upd.ConfigurationPatch)
			if err != nil {
				return err
			}
			set.add("configuration", merged)
		}
		// A change of what the version says waits for, and is refused
		// while, a protected environment serves it.
		if upd.Variables != nil || len(upd.ConfigurationPatch) > 0 || upd.Messages != nil || upd.Content != nil ||
			upd.MarkdownContent != nil {
			if err := s.lockEditable(ctx, tx, id); err != nil {
				return err
			}
		}
		// The update takes the version's row lock, which a promotion's
		// publish holds before it locks production (publishTx).
		if _, err := tx.Exec(ctx, `UPDATE versions SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
			return err
		}
		if upd.Messages != nil {
			if err := s.replaceMessages(ctx, tx, id, *upd.Messages, by); err != nil {
				return err
			}
		}
		if upd.Content != nil || upd.MarkdownContent != nil {
			if err := writePrompt(ctx, tx, id, upd.Content, upd.MarkdownContent, by); err != nil {
				return err
			}
		}
		switch {
		case upd.Promoted == nil:
		case *upd.Promoted:
			if _, _, err := s.publishTx(ctx, tx, env.PublishParams{
				WorkspaceID: workspaceID, CanvasID: canvasID, EnvName: env.Production, VersionID: id, By: by,
			}, false); err != nil {
				return err
			}
		default:
			if err := s.unpublishProduction(ctx, tx, canvasID, id); err != nil {
				return err
			}
		}
		out, err = s.getVersion(ctx, tx, workspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mergeConfiguration applies a merge patch to a stored configuration and
// returns the new stored form; a result that is not a configuration is
// VALIDATION.
func mergeConfiguration(stored string, patch json.RawMessage) (string, error) {
	merged, err := canvas.MergePatch(json.RawMessage(stored), patch)
	if err != nil {
		return "", canvas.Invalid("Invalid configuration.", canvas.Detail{Path: "/json/configuration", Message: err.Error()})
	}
	var c canvas.Configuration
	if err := json.Unmarshal(merged, &c); err != nil {
		return "", canvas.Invalid("Invalid configuration.", canvas.Detail{Path: "/json/configuration", Message: err.Error()})
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// DeleteVersion soft-deletes a live version; a version that is the active
// publication of any environment, or an entry of its split, is CONFLICT.
func (s *Store) DeleteVersion(ctx context.Context, p canvas.DeleteVersionParams) error {
	workspaceID, id, by := p.WorkspaceID, p.ID, p.By
	return s.writeAudited(ctx, Alone, changeOf("prompt-version.delete", auditVersion, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		// The version's row is locked first, so that a publish of it (which
		// reads it FOR SHARE) either commits before the check below or
		// waits.
		if _, _, err := versionRow(ctx, tx, workspaceID, id, s.d.forUpdateOf("v")); err != nil {
			return err
		}
		var published bool
		// An entry of an active split after the first is found in the
		// split's JSON, among the publications of the version's canvas.
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM publications WHERE version_id = ? AND is_active)
			OR EXISTS (SELECT 1 FROM versions v JOIN environments e ON e.canvas_id = v.canvas_id
				JOIN publications p ON p.environment_id = e.id AND p.is_active
				WHERE v.id = ? AND p.split LIKE ?)`,
			id, id, `%"versionId":"`+id+`"%`).Scan(&published); err != nil {
			return err
		} else if published {
			return canvas.Errorf(canvas.ECONFLICT, "The version is published to an environment; publish another version there first.")
		}
		_, err := tx.Exec(ctx, `UPDATE versions SET deleted_at = ?, deleted_by = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
			tx.Now, by, tx.Now, by, id)
		return err
	})
}
