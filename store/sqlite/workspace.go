package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// CreateWorkspace inserts w, setting its id when empty and its creation
// time; a duplicate name is CONFLICT.
func (db *DB) CreateWorkspace(ctx context.Context, w *canvas.Workspace) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if w.ID == "" {
		w.ID = db.NewID()
	}
	w.CreatedAt = tx.now
	if _, err := tx.exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`,
		w.ID, w.Name, formatTime(w.CreatedAt)); err != nil {
		return translate(err)
	}
	return tx.Commit()
}

const workspaceCols = `id, name, created_at`

func scanWorkspace(r interface{ Scan(...any) error }) (*canvas.Workspace, error) {
	var w canvas.Workspace
	return &w, r.Scan(&w.ID, &w.Name, timeCol{&w.CreatedAt})
}

// GetWorkspace returns the workspace with that id.
func (db *DB) GetWorkspace(ctx context.Context, id string) (*canvas.Workspace, error) {
	return db.getWorkspace(ctx, "id", id)
}

// GetWorkspaceByName returns the workspace with that name.
func (db *DB) GetWorkspaceByName(ctx context.Context, name string) (*canvas.Workspace, error) {
	return db.getWorkspace(ctx, "name", name)
}

// getWorkspace reads the workspace whose unique column ("id" or "name",
// never caller input) equals value.
func (db *DB) getWorkspace(ctx context.Context, column, value string) (*canvas.Workspace, error) {
	w, err := scanWorkspace(db.read.QueryRowContext(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE `+column+` = ?`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("workspace")
	}
	return w, err
}

// ListWorkspaces returns every workspace, oldest first.
func (db *DB) ListWorkspaces(ctx context.Context) ([]*canvas.Workspace, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+workspaceCols+` FROM workspaces ORDER BY created_at, id`)
	return rowsOf(rows, err, func(r *sql.Rows) (*canvas.Workspace, error) { return scanWorkspace(r) })
}

// CreateProject inserts p into its workspace, which must exist, setting its
// id when empty and its creation time.
func (db *DB) CreateProject(ctx context.Context, p *canvas.Project) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if p.ID == "" {
		p.ID = db.NewID()
	}
	p.CreatedAt = tx.now
	if _, err := tx.exec(ctx, `INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?, ?, ?, ?)`,
		p.ID, p.WorkspaceID, p.Name, formatTime(p.CreatedAt)); err != nil {
		return translate(err)
	}
	return tx.Commit()
}

const projectCols = `id, name, workspace_id, created_at`

func scanProject(r interface{ Scan(...any) error }) (*canvas.Project, error) {
	var p canvas.Project
	return &p, r.Scan(&p.ID, &p.Name, &p.WorkspaceID, timeCol{&p.CreatedAt})
}

// GetProject returns a project of the workspace.
func (db *DB) GetProject(ctx context.Context, workspaceID, id string) (*canvas.Project, error) {
	p, err := scanProject(db.read.QueryRowContext(ctx,
		`SELECT `+projectCols+` FROM projects WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("project")
	}
	return p, err
}

// ListProjects returns the projects of a workspace, oldest first.
func (db *DB) ListProjects(ctx context.Context, workspaceID string) ([]*canvas.Project, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+projectCols+` FROM projects WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
	return rowsOf(rows, err, func(r *sql.Rows) (*canvas.Project, error) { return scanProject(r) })
}

// CreateAPIKey inserts k, whose Hash is already set, setting its id when
// empty and its creation time. A nil Projects (every project) stays nil.
func (db *DB) CreateAPIKey(ctx context.Context, k *canvas.APIKey) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if k.ID == "" {
		k.ID = db.NewID()
	}
	k.CreatedAt = tx.now
	k.RevokedAt = nil
	var projects any
	if k.Projects != nil {
		if projects, err = jsonText(k.Projects); err != nil {
			return err
		}
	}
	if _, err := tx.exec(ctx,
		`INSERT INTO api_keys (id, workspace_id, role, projects, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		k.ID, k.WorkspaceID, string(k.Role), projects, k.Hash, formatTime(k.CreatedAt)); err != nil {
		return translate(err)
	}
	return tx.Commit()
}

const apiKeyCols = `id, workspace_id, role, projects, hash, created_at, revoked_at`

// qAPIKeyByHash authenticates every API-key request; it is prepared at Open.
const qAPIKeyByHash = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE hash = ?`

func scanAPIKey(r interface{ Scan(...any) error }) (*canvas.APIKey, error) {
	var k canvas.APIKey
	return &k, r.Scan(&k.ID, &k.WorkspaceID, &k.Role, jsonCol{&k.Projects}, &k.Hash,
		timeCol{&k.CreatedAt}, nullTimeCol{&k.RevokedAt})
}

// GetAPIKeyByHash returns the key with that hash, revoked or not.
func (db *DB) GetAPIKeyByHash(ctx context.Context, hash string) (*canvas.APIKey, error) {
	k, err := scanAPIKey(db.readStmts[qAPIKeyByHash].QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("API key")
	}
	return k, err
}

// ListAPIKeys returns the keys of a workspace, or of every workspace when
// workspaceID is empty, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context, workspaceID string) ([]*canvas.APIKey, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE ? = '' OR workspace_id = ? ORDER BY created_at, id`, workspaceID, workspaceID)
	return rowsOf(rows, err, func(r *sql.Rows) (*canvas.APIKey, error) { return scanAPIKey(r) })
}

// PageAPIKeys returns the keys of a workspace from offset on, at most
// limit of them, oldest first, and how many the workspace holds in all,
// read in one snapshot.
func (db *DB) PageAPIKeys(ctx context.Context, workspaceID string, limit, offset int) ([]*canvas.APIKey, int, error) {
	return listPage(ctx, db, listQuery{cols: apiKeyCols, from: `api_keys`, where: `workspace_id = ?`,
		args: []any{workspaceID}, order: `created_at, id`, limit: limit, offset: offset},
		func(r *sql.Rows) (*canvas.APIKey, error) { return scanAPIKey(r) })
}

// GetAPIKey returns a key of the workspace, revoked or not; a key of
// another workspace is NOT_FOUND.
func (db *DB) GetAPIKey(ctx context.Context, workspaceID, id string) (*canvas.APIKey, error) {
	k, err := scanAPIKey(db.read.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("API key")
	}
	return k, err
}

// RevokeAPIKey sets RevokedAt; revoking a revoked key is a no-op, and an
// unknown key is NOT_FOUND.
func (db *DB) RevokeAPIKey(ctx context.Context, id string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ?)`, id).Scan(&exists); err != nil {
		return err
	} else if !exists {
		return canvas.NotFound("API key")
	}
	if _, err := tx.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
		formatTime(tx.now), id); err != nil {
		return err
	}
	return tx.Commit()
}
