package canvas_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is a Service over a real SQLite store with one workspace and one
// project in it.
type fixture struct {
	t         *testing.T
	Store     *sqlite.DB
	Service   *canvas.Service
	Workspace *canvas.Workspace
	Project   *canvas.Project
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := mustOpen(t)
	ws := &canvas.Workspace{Name: "test"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	proj := &canvas.Project{Name: "main", WorkspaceID: ws.ID}
	require.NoError(t, db.CreateProject(ctx, proj))
	return &fixture{t: t, Store: db, Service: canvas.NewService(canvas.Options{Store: db}), Workspace: ws, Project: proj}
}

// User returns a context whose principal is a user of the fixture's
// workspace, as a JWT would carry.
func (f *fixture) User(id string, role canvas.Role) context.Context {
	return canvas.NewContext(context.Background(), &canvas.Principal{
		WorkspaceID: f.Workspace.ID, UserID: id, Role: role,
	})
}

// Key returns a context whose principal is an API key (no user identity),
// optionally restricted to projects.
func (f *fixture) Key(role canvas.Role, projects ...string) context.Context {
	var p []string
	if len(projects) > 0 {
		p = projects
	}
	return canvas.NewContext(context.Background(), &canvas.Principal{
		WorkspaceID: f.Workspace.ID, KeyID: uuid.NewString(), Role: role, Projects: p,
	})
}

// MustProject creates another project of the workspace.
func (f *fixture) MustProject(name string) *canvas.Project {
	f.t.Helper()
	p, err := f.Service.CreateProject(f.Key(canvas.RoleAdmin), canvas.CreateProjectParams{Name: name})
	require.NoError(f.t, err)
	return p
}

// MustCanvas creates a canvas; a nil projectID makes a personal draft of the
// context's user.
func (f *fixture) MustCanvas(ctx context.Context, title string, projectID *string) *canvas.Canvas {
	f.t.Helper()
	c, err := f.Service.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: title, ProjectID: projectID})
	require.NoError(f.t, err)
	return c
}

// MustVersion creates a version.
func (f *fixture) MustVersion(ctx context.Context, params canvas.CreateVersionParams) *canvas.Version {
	f.t.Helper()
	v, err := f.Service.CreateVersion(ctx, params)
	require.NoError(f.t, err)
	return v
}

// assertCode checks the error code of err.
func assertCode(t *testing.T, want string, err error) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, want, canvas.ErrorCode(err), "error: %v", err)
}

// assertInvalid checks that err is VALIDATION with exactly the given detail
// paths, in any order.
func assertInvalid(t *testing.T, err error, paths ...string) {
	t.Helper()
	assertCode(t, canvas.EINVALID, err)
	var got []string
	for _, d := range canvas.ErrorDetails(err) {
		got = append(got, d.Path)
		assert.NotEmpty(t, d.Message, "detail %s has a message", d.Path)
	}
	assert.ElementsMatch(t, paths, got)
}

func ptr[T any](v T) *T { return &v }

func TestService_CreateProject(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		p, err := f.Service.CreateProject(f.Key(canvas.RoleAdmin), canvas.CreateProjectParams{Name: "  research  "})
		require.NoError(t, err)
		assert.NotEmpty(t, p.ID)
		assert.Equal(t, "research", p.Name)
		assert.Equal(t, f.Workspace.ID, p.WorkspaceID)
		assert.False(t, p.CreatedAt.IsZero())
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateProject(f.Key(canvas.RoleEditor), canvas.CreateProjectParams{Name: "x"})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateProject(context.Background(), canvas.CreateProjectParams{Name: "x"})
		assertCode(t, canvas.EUNAUTHORIZED, err)
	})
	t.Run("Validation", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateProject(f.Key(canvas.RoleAdmin), canvas.CreateProjectParams{Name: "   "})
		assertInvalid(t, err, "/json/name")
	})
}

func TestService_ListProjects(t *testing.T) {
	f := newFixture(t)
	other := f.MustProject("other")

	t.Run("OK", func(t *testing.T) {
		list, err := f.Service.ListProjects(f.Key(canvas.RoleViewer))
		require.NoError(t, err)
		var ids []string
		for _, p := range list {
			ids = append(ids, p.ID)
		}
		assert.ElementsMatch(t, []string{f.Project.ID, other.ID}, ids)
	})
	t.Run("RestrictedKey", func(t *testing.T) {
		list, err := f.Service.ListProjects(f.Key(canvas.RoleViewer, other.ID))
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, other.ID, list[0].ID)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		_, err := f.Service.ListProjects(context.Background())
		assertCode(t, canvas.EUNAUTHORIZED, err)
	})
}
