package sqlite

// Temporary scaffold: the store helper replaces every method here with the
// real implementation and deletes this file.

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

var errUnimplemented = errors.New("sqlite: not implemented yet")

func (db *DB) CreateWorkspace(ctx context.Context, w *canvas.Workspace) error {
	return errUnimplemented
}
func (db *DB) GetWorkspaceByName(ctx context.Context, name string) (*canvas.Workspace, error) {
	return nil, errUnimplemented
}
func (db *DB) ListWorkspaces(ctx context.Context) ([]*canvas.Workspace, error) {
	return nil, errUnimplemented
}
func (db *DB) CreateProject(ctx context.Context, p *canvas.Project) error { return errUnimplemented }
func (db *DB) GetProject(ctx context.Context, workspaceID, id string) (*canvas.Project, error) {
	return nil, errUnimplemented
}
func (db *DB) ListProjects(ctx context.Context, workspaceID string) ([]*canvas.Project, error) {
	return nil, errUnimplemented
}
func (db *DB) CreateAPIKey(ctx context.Context, k *canvas.APIKey) error { return errUnimplemented }
func (db *DB) GetAPIKeyByHash(ctx context.Context, hash string) (*canvas.APIKey, error) {
	return nil, errUnimplemented
}
func (db *DB) ListAPIKeys(ctx context.Context, workspaceID string) ([]*canvas.APIKey, error) {
	return nil, errUnimplemented
}
func (db *DB) RevokeAPIKey(ctx context.Context, id string) error        { return errUnimplemented }
func (db *DB) CreateCanvas(ctx context.Context, c *canvas.Canvas) error { return errUnimplemented }
func (db *DB) GetCanvas(ctx context.Context, workspaceID, id, userID string) (*canvas.Canvas, error) {
	return nil, errUnimplemented
}
func (db *DB) ListCanvases(ctx context.Context, f canvas.CanvasFilter) ([]*canvas.Canvas, error) {
	return nil, errUnimplemented
}
func (db *DB) UpdateCanvas(ctx context.Context, workspaceID, id string, upd canvas.CanvasUpdate, by, userID string) (*canvas.Canvas, error) {
	return nil, errUnimplemented
}
func (db *DB) DeleteCanvas(ctx context.Context, workspaceID, id, by string) error {
	return errUnimplemented
}
func (db *DB) CreateVersion(ctx context.Context, v *canvas.Version) error { return errUnimplemented }
func (db *DB) GetVersion(ctx context.Context, workspaceID, id string) (*canvas.Version, error) {
	return nil, errUnimplemented
}
func (db *DB) ListVersions(ctx context.Context, workspaceID, canvasID string) ([]*canvas.Version, error) {
	return nil, errUnimplemented
}
func (db *DB) UpdateVersion(ctx context.Context, workspaceID, id string, upd canvas.VersionUpdate, by string) (*canvas.Version, error) {
	return nil, errUnimplemented
}
func (db *DB) DeleteVersion(ctx context.Context, workspaceID, id, by string) error {
	return errUnimplemented
}
func (db *DB) CreateMessage(ctx context.Context, workspaceID string, m *canvas.Message) error {
	return errUnimplemented
}
func (db *DB) GetMessage(ctx context.Context, workspaceID, id string) (*canvas.Message, error) {
	return nil, errUnimplemented
}
func (db *DB) ListMessages(ctx context.Context, workspaceID, versionID string) ([]*canvas.Message, error) {
	return nil, errUnimplemented
}
func (db *DB) UpdateMessage(ctx context.Context, workspaceID, id string, upd canvas.MessageUpdate, by string) (*canvas.Message, error) {
	return nil, errUnimplemented
}
func (db *DB) DeleteMessage(ctx context.Context, workspaceID, id string) error {
	return errUnimplemented
}
func (db *DB) CreateEnvironment(ctx context.Context, e *env.Environment) error {
	return errUnimplemented
}
func (db *DB) GetEnvironment(ctx context.Context, workspaceID, id string) (*env.Environment, error) {
	return nil, errUnimplemented
}
func (db *DB) FindEnvironment(ctx context.Context, workspaceID, canvasID, name string) (*env.Environment, error) {
	return nil, errUnimplemented
}
func (db *DB) ListEnvironments(ctx context.Context, workspaceID, canvasID string) ([]*env.Environment, error) {
	return nil, errUnimplemented
}
func (db *DB) DeleteEnvironment(ctx context.Context, workspaceID, id string) error {
	return errUnimplemented
}
func (db *DB) Publish(ctx context.Context, p env.PublishParams) (pub *env.Publication, created bool, err error) {
	return nil, false, errUnimplemented
}
func (db *DB) ListPublications(ctx context.Context, workspaceID, envID string, limit, offset int) ([]*env.Publication, int, error) {
	return nil, 0, errUnimplemented
}
