package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// CreateWorkspace inserts w, setting its id when empty and its creation
// time; a duplicate name is CONFLICT.
func (db *DB) CreateWorkspace(ctx context.Context, w *canvas.Workspace) error {
	return db.write(ctx, func(tx *Tx) error {
		if w.ID == "" {
			w.ID = db.NewID()
		}
		w.CreatedAt = tx.now
		_, err := tx.Exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`,
			w.ID, w.Name, w.CreatedAt)
		return translate(err)
	})
}

const workspaceCols = `id, name, created_at`

func scanWorkspace(r scanner) (*canvas.Workspace, error) {
	var w canvas.Workspace
	return &w, r.Scan(&w.ID, &w.Name, &w.CreatedAt)
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
	w, err := scanWorkspace(db.pool.QueryRow(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE `+column+` = $1`, value))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("workspace")
	}
	return w, err
}

// ListWorkspaces returns every workspace, oldest first.
func (db *DB) ListWorkspaces(ctx context.Context) ([]*canvas.Workspace, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+workspaceCols+` FROM workspaces ORDER BY created_at, id`)
	return rowsOf(rows, err, func(r pgx.Rows) (*canvas.Workspace, error) { return scanWorkspace(r) })
}

// CreateProject inserts p into its workspace, which must exist, setting its
// id when empty and its creation time.
func (db *DB) CreateProject(ctx context.Context, p *canvas.Project) error {
	return db.write(ctx, func(tx *Tx) error {
		if p.ID == "" {
			p.ID = db.NewID()
		}
		p.CreatedAt = tx.now
		_, err := tx.Exec(ctx, `INSERT INTO projects (id, workspace_id, name, created_at) VALUES ($1, $2, $3, $4)`,
			p.ID, p.WorkspaceID, p.Name, p.CreatedAt)
		return translate(err)
	})
}

const projectCols = `id, name, workspace_id, created_at`

func scanProject(r scanner) (*canvas.Project, error) {
	var p canvas.Project
	return &p, r.Scan(&p.ID, &p.Name, &p.WorkspaceID, &p.CreatedAt)
}

// GetProject returns a project of the workspace.
func (db *DB) GetProject(ctx context.Context, workspaceID, id string) (*canvas.Project, error) {
	p, err := scanProject(db.pool.QueryRow(ctx,
		`SELECT `+projectCols+` FROM projects WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("project")
	}
	return p, err
}

// ListProjects returns the projects of a workspace, oldest first.
func (db *DB) ListProjects(ctx context.Context, workspaceID string) ([]*canvas.Project, error) {
	rows, err := db.pool.Query(ctx,
		`SELECT `+projectCols+` FROM projects WHERE workspace_id = $1 ORDER BY created_at, id`, workspaceID)
	return rowsOf(rows, err, func(r pgx.Rows) (*canvas.Project, error) { return scanProject(r) })
}

// CreateAPIKey inserts k, whose Hash is already set, setting its id when
// empty and its creation time. A nil Projects (every project) stays nil.
func (db *DB) CreateAPIKey(ctx context.Context, k *canvas.APIKey) error {
	var projects any
	if k.Projects != nil {
		var err error
		if projects, err = jsonText(k.Projects); err != nil {
			return err
		}
	}
	return db.write(ctx, func(tx *Tx) error {
		if k.ID == "" {
			k.ID = db.NewID()
		}
		k.CreatedAt = tx.now
		k.RevokedAt = nil
		_, err := tx.Exec(ctx,
			`INSERT INTO api_keys (id, workspace_id, role, projects, hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.WorkspaceID, string(k.Role), projects, k.Hash, k.CreatedAt)
		return translate(err)
	})
}

const apiKeyCols = `id, workspace_id, role, projects, hash, created_at, revoked_at`

func scanAPIKey(r scanner) (*canvas.APIKey, error) {
	var k canvas.APIKey
	return &k, r.Scan(&k.ID, &k.WorkspaceID, &k.Role, jsonCol{&k.Projects}, &k.Hash, &k.CreatedAt, &k.RevokedAt)
}

// GetAPIKeyByHash returns the key with that hash, revoked or not.
func (db *DB) GetAPIKeyByHash(ctx context.Context, hash string) (*canvas.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("API key")
	}
	return k, err
}

// ListAPIKeys returns the keys of a workspace, or of every workspace when
// workspaceID is empty, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context, workspaceID string) ([]*canvas.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE $1 = '' OR workspace_id = $1 ORDER BY created_at, id`, workspaceID)
	return rowsOf(rows, err, func(r pgx.Rows) (*canvas.APIKey, error) { return scanAPIKey(r) })
}

// PageAPIKeys returns the keys of a workspace from offset on, at most
// limit of them, oldest first, and how many the workspace holds in all,
// read in one snapshot.
func (db *DB) PageAPIKeys(ctx context.Context, workspaceID string, limit, offset int) ([]*canvas.APIKey, int, error) {
	return listPage(ctx, db, listQuery{cols: apiKeyCols, from: `api_keys`, where: `workspace_id = $1`,
		args: params{workspaceID}, order: `created_at, id`, limit: limit, offset: offset},
		func(r pgx.Rows) (*canvas.APIKey, error) { return scanAPIKey(r) })
}

// GetAPIKey returns a key of the workspace, revoked or not; a key of
// another workspace is NOT_FOUND.
func (db *DB) GetAPIKey(ctx context.Context, workspaceID, id string) (*canvas.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("API key")
	}
	return k, err
}

// RevokeAPIKey sets RevokedAt; revoking a revoked key is a no-op, and an
// unknown key is NOT_FOUND.
func (db *DB) RevokeAPIKey(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1)`, id).Scan(&exists); err != nil {
			return err
		} else if !exists {
			return canvas.NotFound("API key")
		}
		_, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, tx.now, id)
		return err
	})
}
