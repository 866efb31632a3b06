package sqlite

import (
	"context"
	"database/sql"
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

func scanCanvas(r interface{ Scan(...any) error }, userID string) (*canvas.Canvas, error) {
	var c canvas.Canvas
	var fav bool
	err := r.Scan(&c.ID, &c.Title, &c.ProjectID, &c.InferencesPercentage, &c.LayoutVersion,
		&c.WorkspaceID, jsonCol{&c.CustomTags}, jsonCol{&c.AllowedCredentials}, &c.CreatedBy, &c.UpdatedBy,
		&c.DeletedBy, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt}, nullTimeCol{&c.DeletedAt}, &fav)
	c.CustomTags = orEmpty(c.CustomTags)
	if userID != "" {
		c.Favorited = &fav
	}
	return &c, err
}

// CreateCanvas inserts c, setting its id when empty, its timestamps, and
// UpdatedBy to CreatedBy when empty. A project id must name a project of the
// canvas' workspace (NOT_FOUND otherwise).
func (db *DB) CreateCanvas(ctx context.Context, c *canvas.Canvas) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if c.ProjectID != nil {
		if err := checkProject(ctx, tx, c.WorkspaceID, *c.ProjectID); err != nil {
			return err
		}
	}
	if c.ID == "" {
		c.ID = db.NewID()
	}
	if c.UpdatedBy == "" {
		c.UpdatedBy = c.CreatedBy
	}
	c.CustomTags = orEmpty(c.CustomTags)
	c.CreatedAt, c.UpdatedAt = tx.now, tx.now
	c.DeletedAt, c.DeletedBy = nil, nil
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
	if _, err := tx.exec(ctx, `INSERT INTO canvases (id, workspace_id, project_id, title,
		inferences_percentage, layout_version, custom_tags, allowed_credentials, created_by, updated_by,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.WorkspaceID, nullString(c.ProjectID), c.Title, c.InferencesPercentage, c.LayoutVersion,
		tags, creds, c.CreatedBy, c.UpdatedBy, formatTime(tx.now), formatTime(tx.now)); err != nil {
		return translate(err)
	}
	return tx.Commit()
}

// checkProject reports NOT_FOUND unless id names a project of the workspace.
func checkProject(ctx context.Context, tx *Tx, workspaceID, id string) error {
	var ok bool
	err := tx.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ? AND workspace_id = ?)`,
		id, workspaceID).Scan(&ok)
	if err == nil && !ok {
		return canvas.NotFound("project")
	}
	return err
}

// GetCanvas returns a live canvas; Favorited is filled when p.UserID is
// set.
func (db *DB) GetCanvas(ctx context.Context, p canvas.GetCanvasParams) (*canvas.Canvas, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return getCanvas(ctx, tx, p.WorkspaceID, p.ID, p.UserID)
}

// qCanvasByID reads a live canvas of a workspace; it is prepared at Open,
// since every canvas-scoped request runs it.
const qCanvasByID = `SELECT ` + canvasCols + ` FROM canvases c
	WHERE c.id = ? AND c.workspace_id = ? AND c.deleted_at IS NULL`

func getCanvas(ctx context.Context, tx *Tx, workspaceID, id, userID string) (*canvas.Canvas, error) {
	c, err := scanCanvas(tx.queryRow(ctx, qCanvasByID, userID, id, workspaceID), userID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("canvas")
	}
	return c, err
}

// checkCanvas reports NOT_FOUND unless id names a live canvas of the
// workspace.
func checkCanvas(ctx context.Context, tx *Tx, workspaceID, id string) error {
	var ok bool
	err := tx.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM canvases
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
func (db *DB) ListCanvases(ctx context.Context, f canvas.CanvasFilter) ([]*canvas.Canvas, error) {
	if f.DraftsOnly && f.OwnerID == "" {
		return []*canvas.Canvas{}, nil
	}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

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
			projects = "c.project_id IN (SELECT value FROM json_each(?))"
			args = append(args, idList(f.Projects))
		}
		if f.OwnerID != "" {
			projects = "(" + projects + ") OR (" + drafts + ")"
			args = append(args, f.OwnerID)
		}
		where = append(where, "("+projects+")")
	}
	rows, err := tx.query(ctx, `SELECT `+canvasCols+` FROM canvases c WHERE `+
		strings.Join(where, " AND ")+` ORDER BY c.created_at DESC, c.id`, args...)
	list, err := rowsOf(rows, err, func(r *sql.Rows) (*canvas.Canvas, error) { return scanCanvas(r, f.UserID) })
	if err != nil || !f.IncludeVersions || len(list) == 0 {
		return list, err
	}
	return list, fillCanvasVersions(ctx, tx, f.WorkspaceID, list)
}

// fillCanvasVersions sets Versions on every canvas of list with three
// queries in all: the ids of the latest and promoted versions, then those
// versions with their messages.
func fillCanvasVersions(ctx context.Context, tx *Tx, workspaceID string, list []*canvas.Canvas) error {
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
		c.Versions = &canvas.CanvasVersions{}
	}
	type pick struct{ canvasID, versionID, kind string }
	rows, err := tx.query(ctx, `
		SELECT v.canvas_id, v.id, 'latest' FROM versions v
		WHERE v.canvas_id IN (SELECT value FROM json_each(?1)) AND v.deleted_at IS NULL
		  AND v.version_index = (SELECT MAX(v2.version_index) FROM versions v2
		                         WHERE v2.canvas_id = v.canvas_id AND v2.deleted_at IS NULL)
		UNION ALL
		SELECT e.canvas_id, p.version_id, 'promoted' FROM environments e
		JOIN publications p ON p.environment_id = e.id AND p.is_active
		WHERE e.canvas_id IN (SELECT value FROM json_each(?1)) AND e.name = 'production' AND e.is_system`,
		idList(ids))
	picks, err := rowsOf(rows, err, func(r *sql.Rows) (pick, error) {
		var p pick
		return p, r.Scan(&p.canvasID, &p.versionID, &p.kind)
	})
	if err != nil || len(picks) == 0 {
		return err
	}
	versionIDs := make([]string, len(picks))
	for i, p := range picks {
		versionIDs[i] = p.versionID
	}
	versions, err := queryVersions(ctx, tx, workspaceID, "v.id IN (SELECT value FROM json_each(?))", idList(versionIDs))
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
func (db *DB) UpdateCanvas(ctx context.Context, p canvas.UpdateCanvasParams) (*canvas.Canvas, error) {
	workspaceID, id, upd, by, userID := p.WorkspaceID, p.ID, p.Update, p.By, p.UserID
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := checkCanvas(ctx, tx, workspaceID, id); err != nil {
		return nil, err
	}
	var set setList
	set.add("updated_by", by)
	set.add("updated_at", formatTime(tx.now))
	if upd.Title != nil {
		set.add("title", *upd.Title)
	}
	if upd.ProjectID != nil {
		if p := *upd.ProjectID; p != nil {
			if err := checkProject(ctx, tx, workspaceID, *p); err != nil {
				return nil, err
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
			return nil, err
		}
		set.add("custom_tags", tags)
	}
	switch {
	case upd.AllowedCredentialsNull:
		set.add("allowed_credentials", nil)
	case upd.AllowedCredentials != nil:
		creds, err := jsonText(orEmpty(*upd.AllowedCredentials))
		if err != nil {
			return nil, err
		}
		set.add("allowed_credentials", creds)
	}
	if _, err := tx.exec(ctx, `UPDATE canvases SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
		return nil, translate(err)
	}
	if upd.Favorited != nil {
		if userID == "" {
			return nil, canvas.Invalid("Only a user can favorite a canvas.",
				canvas.Detail{Path: "/json/favorited", Message: "requires a token with a user identity"})
		}
		q := `DELETE FROM favorites WHERE user_id = ? AND canvas_id = ?`
		if *upd.Favorited {
			q = `INSERT INTO favorites (user_id, canvas_id) VALUES (?, ?) ON CONFLICT DO NOTHING`
		}
		if _, err := tx.exec(ctx, q, userID, id); err != nil {
			return nil, err
		}
	}
	c, err := getCanvas(ctx, tx, workspaceID, id, userID)
	if err != nil {
		return nil, err
	}
	return c, tx.Commit()
}

// DeleteCanvas soft-deletes a live canvas. Its versions, messages,
// environments and publications stay in the database but are unreachable.
func (db *DB) DeleteCanvas(ctx context.Context, p canvas.DeleteCanvasParams) error {
	workspaceID, id, by := p.WorkspaceID, p.ID, p.By
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE canvases SET deleted_at = ?, deleted_by = ?, updated_at = ?, updated_by = ?
		WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL`,
		formatTime(tx.now), by, formatTime(tx.now), by, id, workspaceID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return canvas.NotFound("canvas")
	}
	return tx.Commit()
}
