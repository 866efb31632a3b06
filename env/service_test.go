package env_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is a real SQLite store holding one workspace with one project and
// one canvas in it, and the env service over the store.
type fixture struct {
	db        *sqlite.DB
	svc       *env.Service
	workspace *canvas.Workspace
	project   *canvas.Project
	canvas    *canvas.Canvas
}

// mustFixture opens a fresh store in a temp dir; t.Cleanup closes it.
func mustFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := &fixture{db: db, svc: env.NewService(env.Options{Store: db, Canvases: db, Changes: db})}
	f.workspace = &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, f.workspace))
	f.project = &canvas.Project{Name: "support", WorkspaceID: f.workspace.ID}
	require.NoError(t, db.CreateProject(ctx, f.project))
	f.canvas = f.mustCanvas(t, &f.project.ID, "user-1")
	return f
}

// as returns a context carrying a principal of the fixture's workspace.
func (f *fixture) as(role canvas.Role, projects ...string) context.Context {
	return canvas.NewContext(context.Background(), &canvas.Principal{
		WorkspaceID: f.workspace.ID, UserID: "user-1", Role: role, Projects: projects,
	})
}

// mustCanvas creates a canvas in the project, or a personal draft of
// createdBy when projectID is nil.
func (f *fixture) mustCanvas(t testing.TB, projectID *string, createdBy string) *canvas.Canvas {
	t.Helper()
	c := &canvas.Canvas{
		Title: "Support bot", ProjectID: projectID, WorkspaceID: f.workspace.ID,
		InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CustomTags: []string{},
		CreatedBy: createdBy, UpdatedBy: createdBy,
	}
	require.NoError(t, f.db.CreateCanvas(context.Background(), c))
	return c
}

// mustVersion creates a version of the fixture's canvas with one system
// message.
func (f *fixture) mustVersion(t testing.TB, title, prompt string) *canvas.Version {
	t.Helper()
	v := &canvas.Version{
		PromptID: f.canvas.ID, Title: title, WorkspaceID: f.workspace.ID,
		Variables: []canvas.Variable{}, CreatedBy: "user-1", UpdatedBy: "user-1",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: prompt, CreatedBy: "user-1", UpdatedBy: "user-1"}},
	}
	require.NoError(t, f.db.CreateVersion(context.Background(), v))
	return v
}

func (f *fixture) mustPublish(t testing.TB, envName, versionID string) *env.Publication {
	t.Helper()
	pub, _, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
		CanvasID: f.canvas.ID, EnvName: envName, VersionID: versionID,
	})
	require.NoError(t, err)
	return pub
}

func TestService_Publish(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "Hello")
		pub, created, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
			CanvasID: f.canvas.ID, EnvName: " production ", VersionID: v.ID,
		})
		require.NoError(t, err)
		assert.True(t, created)
		assert.Equal(t, v.ID, pub.VersionID)
		assert.Equal(t, env.Production, pub.EnvironmentName)
		assert.True(t, pub.EnvironmentIsSystem)
		assert.True(t, pub.IsActive)
		assert.Nil(t, pub.UnpublishedAt)
		assert.Equal(t, "user-1", pub.PublishedBy)
		assert.Equal(t, 1, pub.VersionIndex)
	})
	t.Run("AlreadyActive", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "Hello")
		first := f.mustPublish(t, env.Production, v.ID)
		again, created, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
			CanvasID: f.canvas.ID, EnvName: env.Production, VersionID: v.ID,
		})
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, first.PublicationID, again.PublicationID)
	})
	t.Run("InvalidName", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "Hello")
		for _, name := range []string{"latest", "Prod", "a--b", ""} {
			_, _, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
				CanvasID: f.canvas.ID, EnvName: name, VersionID: v.ID,
			})
			assert.Equal(t, canvas.EINVALIDENVNAME, canvas.ErrorCode(err), "name %q", name)
		}
	})
	t.Run("MissingCustomEnvironment", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "Hello")
		_, _, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
			CanvasID: f.canvas.ID, EnvName: "staging", VersionID: v.ID,
		})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "Hello")
		params := env.PublishVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production, VersionID: v.ID}
		_, _, err := f.svc.Publish(f.as(canvas.RoleViewer), params)
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err), "viewer")
		_, _, err = f.svc.Publish(f.as(canvas.RoleEditor, "another-project"), params)
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err), "other project")
	})
	t.Run("Concurrent", func(t *testing.T) {
		f := mustFixture(t)
		const n = 8
		versions := make([]*canvas.Version, n)
		for i := range versions {
			versions[i] = f.mustVersion(t, fmt.Sprintf("v%d", i+1), "Prompt")
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, v := range versions {
			wg.Go(func() {
				_, _, errs[i] = f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
					CanvasID: f.canvas.ID, EnvName: env.Production, VersionID: v.ID,
				})
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		page, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID, EnvName: env.Production, Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, n, page.Total)
		active := 0
		for _, pub := range page.Items {
			if pub.IsActive {
				active++
				assert.Nil(t, pub.UnpublishedAt)
			} else {
				assert.NotNil(t, pub.UnpublishedAt)
			}
		}
		assert.Equal(t, 1, active)
		assert.True(t, page.Items[0].IsActive, "the newest publication is the active one")
	})
	t.Run("Unauthorized", func(t *testing.T) {
		f := mustFixture(t)
		_, _, err := f.svc.Publish(context.Background(), env.PublishVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production})
		assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err))
	})
}

func TestService_History(t *testing.T) {
	t.Run("ProductionOnDemand", func(t *testing.T) {
		f := mustFixture(t)
		page, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID, EnvName: env.Production, Limit: env.DefaultLimit})
		require.NoError(t, err)
		assert.Empty(t, page.Items)
		assert.Equal(t, 0, page.Total)
		assert.Equal(t, env.Production, page.Environment.Name)
		assert.True(t, page.Environment.IsSystem)
	})
	t.Run("NewestFirst", func(t *testing.T) {
		f := mustFixture(t)
		v1, v2 := f.mustVersion(t, "v1", "One"), f.mustVersion(t, "v2", "Two")
		f.mustPublish(t, env.Production, v1.ID)
		f.mustPublish(t, env.Production, v2.ID)
		f.mustPublish(t, env.Production, v1.ID) // rollback

		page, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID, EnvName: env.Production, Limit: 10})
		require.NoError(t, err)
		require.Len(t, page.Items, 3)
		assert.Equal(t, 3, page.Total)
		got := []string{page.Items[0].VersionID, page.Items[1].VersionID, page.Items[2].VersionID}
		assert.Equal(t, []string{v1.ID, v2.ID, v1.ID}, got)
		assert.Equal(t, []int64{3, 2, 1}, []int64{page.Items[0].Seq, page.Items[1].Seq, page.Items[2].Seq})
		assert.True(t, page.Items[0].IsActive)
		assert.Nil(t, page.Items[0].UnpublishedAt)
		for _, old := range page.Items[1:] {
			assert.False(t, old.IsActive)
			assert.NotNil(t, old.UnpublishedAt)
		}
	})
	t.Run("Clamps", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "One")
		f.mustPublish(t, env.Production, v.ID)
		tests := []struct{ limit, offset, wantLimit, wantOffset int }{
			{0, 0, 1, 0}, {-3, -7, 1, 0}, {1000, 0, 100, 0}, {100, 5, 100, 5},
		}
		for _, tt := range tests {
			page, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{
				CanvasID: f.canvas.ID, EnvName: env.Production, Limit: tt.limit, Offset: tt.offset,
			})
			require.NoError(t, err)
			assert.Equal(t, tt.wantLimit, page.Limit, "limit %d", tt.limit)
			assert.Equal(t, tt.wantOffset, page.Offset, "offset %d", tt.offset)
		}
	})
	t.Run("CustomNotFound", func(t *testing.T) {
		f := mustFixture(t)
		_, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID, EnvName: "staging", Limit: 20})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("CanvasNotFound", func(t *testing.T) {
		f := mustFixture(t)
		_, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f", EnvName: env.Production, Limit: 20})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("OtherUsersDraftNotFound", func(t *testing.T) {
		f := mustFixture(t)
		draft := f.mustCanvas(t, nil, "user-2")
		_, err := f.svc.History(f.as(canvas.RoleAdmin), env.HistoryParams{CanvasID: draft.ID, EnvName: env.Production, Limit: 20})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("OtherWorkspaceNotFound", func(t *testing.T) {
		f := mustFixture(t)
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, f.db.CreateWorkspace(context.Background(), other))
		ctx := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: other.ID, KeyID: "k", Role: canvas.RoleAdmin})
		_, err := f.svc.History(ctx, env.HistoryParams{CanvasID: f.canvas.ID, EnvName: env.Production, Limit: 20})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
}

func TestService_ActiveVersion(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "You are helpful.")
		f.mustPublish(t, env.Production, v.ID)
		got, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production})
		require.NoError(t, err)
		assert.Equal(t, v.ID, got.ID)
		assert.Equal(t, f.workspace.ID, got.WorkspaceID)
		assert.Equal(t, 1, got.VersionIndex)
		assert.True(t, got.Promoted)
		require.NotNil(t, got.Message)
		assert.Equal(t, "You are helpful.", got.Message.Content)
		require.Len(t, got.Messages, 1)
	})
	t.Run("NothingPublished", func(t *testing.T) {
		f := mustFixture(t)
		_, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("CustomNotFound", func(t *testing.T) {
		f := mustFixture(t)
		_, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: "qa"})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
}

func TestService_CreateEnvironment(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := mustFixture(t)
		e, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: " staging "})
		require.NoError(t, err)
		assert.NotEmpty(t, e.ID)
		assert.Equal(t, "staging", e.Name)
		assert.False(t, e.IsSystem)
		assert.Equal(t, f.canvas.ID, e.ResourceID)
		assert.Equal(t, env.ResourcePrompt, e.ResourceType)
		assert.Nil(t, e.ActiveVersionID)
	})
	t.Run("Conflict", func(t *testing.T) {
		f := mustFixture(t)
		params := env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: "staging"}
		_, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), params)
		require.NoError(t, err)
		_, err = f.svc.CreateEnvironment(f.as(canvas.RoleEditor), params)
		assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
	})
	t.Run("InvalidName", func(t *testing.T) {
		f := mustFixture(t)
		for _, name := range []string{"production", "draft", "Staging", "-x"} {
			_, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: name})
			assert.Equal(t, canvas.EINVALIDENVNAME, canvas.ErrorCode(err), "name %q", name)
		}
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := mustFixture(t)
		_, err := f.svc.CreateEnvironment(f.as(canvas.RoleViewer), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: "staging"})
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))
	})
}

func TestService_ListEnvironments(t *testing.T) {
	f := mustFixture(t)
	v := f.mustVersion(t, "v1", "One")
	for _, name := range []string{"staging", "beta"} {
		_, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: name})
		require.NoError(t, err)
	}
	f.mustPublish(t, "staging", v.ID)

	envs, err := f.svc.ListEnvironments(f.as(canvas.RoleViewer), f.canvas.ID)
	require.NoError(t, err)
	require.Len(t, envs, 3)
	assert.Equal(t, []string{env.Production, "beta", "staging"}, []string{envs[0].Name, envs[1].Name, envs[2].Name})
	assert.Nil(t, envs[0].ActiveVersionID)
	assert.Nil(t, envs[1].ActiveVersionID)
	require.NotNil(t, envs[2].ActiveVersionID)
	assert.Equal(t, v.ID, *envs[2].ActiveVersionID)
}

func TestService_DeleteEnvironment(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := mustFixture(t)
		v := f.mustVersion(t, "v1", "One")
		e, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: "staging"})
		require.NoError(t, err)
		f.mustPublish(t, "staging", v.ID)
		require.NoError(t, f.svc.DeleteEnvironment(f.as(canvas.RoleEditor), e.ID))
		_, err = f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID, EnvName: "staging", Limit: 20})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
	t.Run("Production", func(t *testing.T) {
		f := mustFixture(t)
		envs, err := f.svc.ListEnvironments(f.as(canvas.RoleViewer), f.canvas.ID)
		require.NoError(t, err)
		require.NotEmpty(t, envs)
		err = f.svc.DeleteEnvironment(f.as(canvas.RoleEditor), envs[0].ID)
		assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := mustFixture(t)
		e, err := f.svc.CreateEnvironment(f.as(canvas.RoleEditor), env.CreateEnvironmentParams{CanvasID: f.canvas.ID, Name: "staging"})
		require.NoError(t, err)
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(f.svc.DeleteEnvironment(f.as(canvas.RoleViewer), e.ID)), "viewer")
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(f.svc.DeleteEnvironment(f.as(canvas.RoleEditor, "another-project"), e.ID)), "other project")
	})
	t.Run("NotFound", func(t *testing.T) {
		f := mustFixture(t)
		err := f.svc.DeleteEnvironment(f.as(canvas.RoleEditor), "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f")
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
}
