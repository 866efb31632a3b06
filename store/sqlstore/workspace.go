package sqlstore

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// CreateWorkspace inserts w, setting its id when empty and its creation
// time; a duplicate name is CONFLICT.
func (s *Store) CreateWorkspace(ctx context.Context, w *canvas.Workspace) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		if w.ID == "" {
			w.ID = tx.NewID()
		}
		w.CreatedAt = tx.Now
		_, err := tx.Exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`,
			w.ID, w.Name, w.CreatedAt)
		return err
	})
}

const workspaceCols = `id, name, created_at`

func scanWorkspace(r Row) (*canvas.Workspace, error) {
	var w canvas.Workspace
	return &w, r.Scan(&w.ID, &w.Name, &w.CreatedAt)
}

// GetWorkspace returns the workspace with that id.
func (s *Store) GetWorkspace(ctx context.Context, id string) (*canvas.Workspace, error) {
	return s.getWorkspace(ctx, "id", id)
}

// GetWorkspaceByName returns the workspace with that name.
func (s *Store) GetWorkspaceByName(ctx context.Context, name string) (*canvas.Workspace, error) {
	return s.getWorkspace(ctx, "name", name)
}

// getWorkspace reads the workspace whose unique column ("id" or "name",
// never caller input) equals value.
func (s *Store) getWorkspace(ctx context.Context, column, value string) (*canvas.Workspace, error) {
	return getOne(ctx, s, "workspace", scanWorkspace, `SELECT `+workspaceCols+` FROM workspaces WHERE `+column+` = ?`, value)
}

// ListWorkspaces returns every workspace, oldest first.
func (s *Store) ListWorkspaces(ctx context.Context) ([]*canvas.Workspace, error) {
	return getAll(ctx, s, scanWorkspace, `SELECT `+workspaceCols+` FROM workspaces ORDER BY created_at, id`)
}

// CreateProject inserts p into its workspace, which must exist, setting its
// id when empty and its creation time.
func (s *Store) CreateProject(ctx context.Context, p *canvas.Project) error {
	return s.writeAudited(ctx, Alone, changeOf("project.create", auditProject, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		if p.ID == "" {
			p.ID = tx.NewID()
		}
		p.CreatedAt = tx.Now
		_, err := tx.Exec(ctx, `INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?, ?, ?, ?)`,
			p.ID, p.WorkspaceID, p.Name, p.CreatedAt)
		return err
	})
}

const projectCols = `id, name, workspace_id, created_at`

func scanProject(r Row) (*canvas.Project, error) {
	var p canvas.Project
	return &p, r.Scan(&p.ID, &p.Name, &p.WorkspaceID, &p.CreatedAt)
}

// GetProject returns a project of the workspace.
func (s *Store) GetProject(ctx context.Context, workspaceID, id string) (*canvas.Project, error) {
	return getOne(ctx, s, "project", scanProject,
		`SELECT `+projectCols+` FROM projects WHERE id = ? AND workspace_id = ?`, id, workspaceID)
}

// ListProjects returns the projects of a workspace, oldest first.
func (s *Store) ListProjects(ctx context.Context, workspaceID string) ([]*canvas.Project, error) {
	return getAll(ctx, s, scanProject,
		`SELECT `+projectCols+` FROM projects WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

// CreateAPIKey inserts k, whose Hash is already set, setting its id when
// empty and its creation time. A nil Projects (every project) stays nil.
func (s *Store) CreateAPIKey(ctx context.Context, k *canvas.APIKey) error {
	var projects any
	if k.Projects != nil {
		var err error
		if projects, err = jsonText(k.Projects); err != nil {
			return err
		}
	}
	return s.writeAudited(ctx, Alone, changeOf("api-key.create", auditAPIKey, k.WorkspaceID, &k.ID), func(ctx context.Context, tx *Tx) error {
		if k.ID == "" {
			k.ID = tx.NewID()
		}
		k.CreatedAt = tx.Now
		k.RevokedAt = nil
		_, err := tx.Exec(ctx,
			`INSERT INTO api_keys (id, workspace_id, name, role, projects, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.WorkspaceID, k.Name, string(k.Role), projects, k.Hash, k.CreatedAt)
		return err
	})
}

const apiKeyCols = `id, workspace_id, name, role, projects, hash, created_at, revoked_at`

// QAPIKeyByHash authenticates every API-key request; the SQLite driver
// prepares it at Open.
const QAPIKeyByHash = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE hash = ?`

func scanAPIKey(r Row) (*canvas.APIKey, error) {
	var k canvas.APIKey
	return &k, r.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Role, jsonCol{&k.Projects}, &k.Hash, &k.CreatedAt, &k.RevokedAt)
}

// GetAPIKeyByHash returns the key with that hash, revoked or not.
func (s *Store) GetAPIKeyByHash(ctx context.Context, hash string) (*canvas.APIKey, error) {
	return getOne(ctx, s, "API key", scanAPIKey, QAPIKeyByHash, hash)
}

// ListAPIKeys returns the keys of a workspace, or of every workspace when
// workspaceID is empty, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, workspaceID string) ([]*canvas.APIKey, error) {
	return getAll(ctx, s, scanAPIKey, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE ? = '' OR workspace_id = ? ORDER BY created_at, id`, workspaceID, workspaceID)
}

// PageAPIKeys returns the keys of a workspace from offset on, at most
// limit of them, oldest first, and how many the workspace holds in all,
// read in one snapshot.
func (s *Store) PageAPIKeys(ctx context.Context, workspaceID string, limit, offset int) ([]*canvas.APIKey, int, error) {
	return listPage(ctx, s, listQuery{cols: apiKeyCols, from: `api_keys`, where: `workspace_id = ?`,
		args: []any{workspaceID}, order: `created_at, id`, limit: limit, offset: offset},
		func(r Rows) (*canvas.APIKey, error) { return scanAPIKey(r) })
}

// GetAPIKey returns a key of the workspace, revoked or not; a key of
// another workspace is NOT_FOUND.
func (s *Store) GetAPIKey(ctx context.Context, workspaceID, id string) (*canvas.APIKey, error) {
	return getOne(ctx, s, "API key", scanAPIKey,
		`SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? AND id = ?`, workspaceID, id)
}

// RevokeAPIKey sets RevokedAt; revoking a revoked key is a no-op, and an
// unknown key is NOT_FOUND.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) error {
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var workspaceID string
		err := tx.QueryRow(ctx, `SELECT workspace_id FROM api_keys WHERE id = ?`, id).Scan(&workspaceID)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("API key")
		} else if err != nil {
			return err
		}
		return s.audited(ctx, tx, changeOf("api-key.revoke", auditAPIKey, workspaceID, &id), func() error {
			_, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, tx.Now, id)
			return err
		})
	})
}
