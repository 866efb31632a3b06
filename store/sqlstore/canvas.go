package sqlstore

import (
	"context"
	"errors"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// canvasCols are the columns scanCanvas reads, in order; the last one is
// whether the user bound to the query's first parameter favorited the canvas.
const canvasCols = `c.id, c.title, c.project_id, c.inferences_percentage, c.layout_version,
	c.workspace_id, c.custom_tags, c.allowed_credentials, c.created_by, c.updated_by, c.deleted_by,
	c.created_at, c.updated_at, c.deleted_at,
	EXISTS (SELECT 1 FROM favorites f WHERE f.canvas_id = c.id AND f.user_id = ?)`

func scanCanvas(r Row, userID string) (*canvas.Canvas, error) {
	var c canvas.Canvas
	var fav bool
	err := r.Scan(&c.ID, &c.Title, &c.ProjectID, &c.InferencesPercentage, &c.LayoutVersion,
		&c.WorkspaceID, jsonCol{&c.CustomTags}, jsonCol{&c.AllowedCredentials}, &c.CreatedBy, &c.UpdatedBy,
		&c.DeletedBy, &c.CreatedAt, &c.UpdatedAt, &c.DeletedAt, &fav)
	c.CustomTags = orEmpty(c.CustomTags)
	if userID != "" {
		c.Favorited = &fav
	}
	return &c, err
}

// CreateCanvas inserts c, setting its id when empty, its timestamps, and
// UpdatedBy to CreatedBy when empty. A project id must name a project of the
// canvas' workspace (NOT_FOUND otherwise).
func (s *Store) CreateCanvas(ctx context.Context, c *canvas.Canvas) error {
	c.CustomTags = orEmpty(c.CustomTags)
	tags, err := jsonText(c.CustomTags)
	if err != nil {
		return err
	}
	var creds any
	if c.AllowedCredentials != nil {
		if creds, err = jsonText(c.AllowedCredentials); err != nil {
			return err
		}
	}
	return s.writeAudited(ctx, Alone, changeOf("prompt.create", auditCanvas, c.WorkspaceID, &c.ID), func(ctx context.Context, tx *Tx) error {
		if c.ProjectID != nil {
			if err := checkProject(ctx, tx, c.WorkspaceID, *c.ProjectID); err != nil {
				return err
			}
		}
		if c.ID == "" {
			c.ID = tx.NewID()
		}
		if c.UpdatedBy == "" {
			c.UpdatedBy = c.CreatedBy
		}
		c.CreatedAt, c.UpdatedAt = tx.Now, tx.Now
		c.DeletedAt, c.DeletedBy = nil, nil
		_, err := tx.Exec(ctx, `INSERT INTO canvases (id, workspace_id, project_id, title,
			inferences_percentage, layout_version, custom_tags, allowed_credentials, created_by, updated_by,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.WorkspaceID, nullString(c.ProjectID), c.Title, c.InferencesPercentage, c.LayoutVersion,
			tags, creds, c.CreatedBy, c.UpdatedBy, tx.Now, tx.Now)
		return err
	})
}

// checkProject reports NOT_FOUND unless id names a project of the workspace.
func checkProject(ctx context.Context, tx *Tx, workspaceID, id string) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ? AND workspace_id = ?)`,
		id, workspaceID).Scan(&ok)
	if err == nil && !ok {
		return canvas.NotFound("project")
	}
	return err
}

// GetCanvas returns a live canvas; Favorited is filled when p.UserID is
// set.
func (s *Store) GetCanvas(ctx context.Context, p canvas.GetCanvasParams) (*canvas.Canvas, error) {
	var c *canvas.Canvas
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		c, err = getCanvas(ctx, tx, p.WorkspaceID, p.ID, p.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// qCanvasByID reads a live canvas of a workspace; every canvas-scoped
// request runs it.
const qCanvasByID = `SELECT ` + canvasCols + ` FROM canvases c
	WHERE c.id = ? AND c.workspace_id = ? AND c.deleted_at IS NULL`

func getCanvas(ctx context.Context, tx *Tx, workspaceID, id, userID string) (*canvas.Canvas, error) {
	c, err := scanCanvas(tx.QueryRow(ctx, qCanvasByID, userID, id, workspaceID), userID)
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("canvas")
	}
	return c, err
}

// checkCanvas reports NOT_FOUND unless id names a live canvas of the
// workspace.
func checkCanvas(ctx context.Context, tx *Tx, workspaceID, id string) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM canvases
		WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL)`, id, workspaceID).Scan(&ok)
	if err == nil && !ok {
		return canvas.NotFound("canvas")
	}
	return err
}

// ListCanvases returns the live canvases of f.WorkspaceID that f selects,
// newest first. Project canvases are restricted by f.ProjectID and
// f.Projects; personal drafts are those created by f.OwnerID, and none when
// it is empty. With f.IncludeVersions each canvas gets its promoted and
// latest versions, loaded for the whole page at once.
func (s *Store) ListCanvases(ctx context.Context, f canvas.CanvasFilter) ([]*canvas.Canvas, error) {
	if f.DraftsOnly && f.OwnerID == "" {
		return []*canvas.Canvas{}, nil
	}
	where := []string{"c.workspace_id = ?", "c.deleted_at IS NULL"}
	args := []any{f.UserID, f.WorkspaceID}
	if f.ProjectID != nil {
		where = append(where, "c.project_id = ?")
		args = append(args, *f.ProjectID)
	}
	drafts := "c.project_id IS NULL AND c.created_by = ?"
	switch {
	case f.DraftsOnly:
		where = append(where, drafts)
		args = append(args, f.OwnerID)
	default:
		projects := "c.project_id IS NOT NULL"
		if f.Projects != nil {
			projects = s.d.InIDs("c.project_id")
			args = append(args, IDs(f.Projects))
		}
		if f.OwnerID != "" {
			projects = "(" + projects + ") OR (" + drafts + ")"
			args = append(args, f.OwnerID)
		}
		where = append(where, "("+projects+")")
	}
	var list []*canvas.Canvas
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+canvasCols+` FROM canvases c WHERE `+
			strings.Join(where, " AND ")+` ORDER BY c.created_at DESC, c.id`, args...)
		list, err = RowsOf(rows, err, func(r Rows) (*canvas.Canvas, error) { return scanCanvas(r, f.UserID) })
		if err != nil || !f.IncludeVersions || len(list) == 0 {
			return err
		}
		return s.fillCanvasVersions(ctx, tx, f.WorkspaceID, list)
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// fillCanvasVersions sets Versions on every canvas of list with three
// queries in all: the ids of the latest and promoted versions, then those
// versions with their messages.
func (s *Store) fillCanvasVersions(ctx context.Context, tx *Tx, workspaceID string, list []*canvas.Canvas) error {
	canvasIDs := make(IDs, len(list))
	for i, c := range list {
		canvasIDs[i] = c.ID
		c.Versions = &canvas.CanvasVersions{}
	}
	type pick struct{ canvasID, versionID, kind string }
	rows, err := tx.Query(ctx, `
		SELECT v.canvas_id, v.id, 'latest' FROM versions v
		WHERE `+s.d.InIDs("v.canvas_id")+` AND v.deleted_at IS NULL
		  AND v.version_index = (SELECT MAX(v2.version_index) FROM versions v2
		                         WHERE v2.canvas_id = v.canvas_id AND v2.deleted_at IS NULL)
		UNION ALL
		SELECT e.canvas_id, p.version_id, 'promoted' FROM environments e
		JOIN publications p ON p.environment_id = e.id AND p.is_active
		WHERE `+s.d.InIDs("e.canvas_id")+` AND e.name = 'production' AND e.is_system`, canvasIDs, canvasIDs)
	picks, err := RowsOf(rows, err, func(r Rows) (pick, error) {
		var p pick
		return p, r.Scan(&p.canvasID, &p.versionID, &p.kind)
	})
	if err != nil || len(picks) == 0 {
		return err
	}
	versionIDs := make(IDs, len(picks))
	for i, p := range picks {
		versionIDs[i] = p.versionID
	}
	versions, err := s.queryVersions(ctx, tx, workspaceID, s.d.InIDs("v.id"), versionIDs)
	if err != nil {
		return err
	}
	byID := make(map[string]*canvas.Version, len(versions))
	for _, v := range versions {
		byID[v.ID] = v
	}
	byCanvas := make(map[string]*canvas.CanvasVersions, len(list))
	for _, c := range list {
		byCanvas[c.ID] = c.Versions
	}
	for _, p := range picks {
		cv, v := byCanvas[p.canvasID], byID[p.versionID]
		if p.kind == "latest" {
			cv.Latest = v
		} else {
			cv.Promoted = v
		}
	}
	return nil
}

// UpdateCanvas applies p.Update to a live canvas, records p.By as its
// updater, and returns it. Favorited sets or clears p.UserID's favorite and
// needs a user.
func (s *Store) UpdateCanvas(ctx context.Context, p canvas.UpdateCanvasParams) (*canvas.Canvas, error) {
	workspaceID, id, upd, by, userID := p.WorkspaceID, p.ID, p.Update, p.By, p.UserID
	if upd.Favorited != nil && userID == "" {
		return nil, canvas.Invalid("Only a user can favorite a canvas.",
			canvas.Detail{Path: "/json/favorited", Message: "requires a token with a user identity"})
	}
	var out *canvas.Canvas
	err := s.writeAudited(ctx, Alone, changeOf("prompt.update", auditCanvas, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		if err := checkCanvas(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		var set setList
		set.add("updated_by", by)
		set.add("updated_at", tx.Now)
		if upd.Title != nil {
			set.add("title", *upd.Title)
		}
		if upd.ProjectID != nil {
			if p := *upd.ProjectID; p != nil {
				if err := checkProject(ctx, tx, workspaceID, *p); err != nil {
					return err
				}
			}
			set.add("project_id", nullString(*upd.ProjectID))
		}
		if upd.InferencesPercentage != nil {
			set.add("inferences_percentage", *upd.InferencesPercentage)
		}
		if upd.LayoutVersion != nil {
			set.add("layout_version", *upd.LayoutVersion)
		}
		if upd.CustomTags != nil {
			tags, err := jsonText(orEmpty(*upd.CustomTags))
			if err != nil {
				return err
			}
			set.add("custom_tags", tags)
		}
		switch {
		case upd.AllowedCredentialsNull:
			set.add("allowed_credentials", nil)
		case upd.AllowedCredentials != nil:
			creds, err := jsonText(orEmpty(*upd.AllowedCredentials))
			if err != nil {
				return err
			}
			set.add("allowed_credentials", creds)
		}
		if _, err := tx.Exec(ctx, `UPDATE canvases SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
			return err
		}
		if upd.Favorited != nil {
			q := `DELETE FROM favorites WHERE user_id = ? AND canvas_id = ?`
			if *upd.Favorited {
				q = `INSERT INTO favorites (user_id, canvas_id) VALUES (?, ?) ON CONFLICT DO NOTHING`
			}
			if _, err := tx.Exec(ctx, q, userID, id); err != nil {
				return err
			}
		}
		var err error
		out, err = getCanvas(ctx, tx, workspaceID, id, userID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteCanvas soft-deletes a live canvas. Its versions, messages,
// environments and publications stay in the database but are unreachable.
func (s *Store) DeleteCanvas(ctx context.Context, p canvas.DeleteCanvasParams) error {
	return s.writeAudited(ctx, Alone, changeOf("prompt.delete", auditCanvas, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE canvases SET deleted_at = ?, deleted_by = ?, updated_at = ?, updated_by = ?
			WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL`, tx.Now, p.By, tx.Now, p.By, p.ID, p.WorkspaceID)
		if err != nil {
			return err
		} else if n == 0 {
			return canvas.NotFound("canvas")
		}
		return nil
	})
}
