package storetest

import (
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testEnvironments(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ProductionCreatedOnDemand", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.NotEmpty(t, prod.ID)
		assert.Equal(t, env.Production, prod.Name)
		assert.True(t, prod.IsSystem)
		assert.Equal(t, env.ResourcePrompt, prod.ResourceType)
		assert.Equal(t, c.ID, prod.ResourceID)
		assert.Equal(t, f.ws.ID, prod.WorkspaceID)
		assert.Nil(t, prod.ActiveVersionID)
		again, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.Equal(t, prod.ID, again.ID)
	})
	run(t, newStore, "ProductionCreatedOnceUnderConcurrency", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		found := make([]string, 8)
		var wg sync.WaitGroup
		for i := range found {
			wg.Go(func() {
				e, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
					Name: env.Production})
				if assert.NoError(t, err) {
					found[i] = e.ID
				}
			})
		}
		wg.Wait()
		for _, id := range found {
			assert.Equal(t, found[0], id)
		}
		list, err := f.s.ListEnvironments(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.Len(t, list, 1)
	})
	run(t, newStore, "FindNotFound", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		_, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: "staging"})
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: missingID,
			Name: env.Production})
		requireCode(t, canvas.ENOTFOUND, err)
		other := f.Workspace("other")
		_, err = f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: other.ID, CanvasID: c.ID,
			Name: env.Production})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "CreateGetList", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		staging := f.Env(c, "staging")
		assert.NotEmpty(t, staging.ID)
		assert.False(t, staging.IsSystem)
		assert.False(t, staging.CreatedAt.IsZero())
		f.Env(c, "beta")
		f.Publish(v, "staging")
		f.Publish(v, env.Production)
		f.Env(f.Canvas("d", nil, "alice"), "elsewhere")

		got, err := f.s.GetEnvironment(f.ctx, f.ws.ID, staging.ID)
		require.NoError(t, err)
		assert.Equal(t, "staging", got.Name)
		assert.Equal(t, "alice", got.CreatedBy)
		assert.Equal(t, c.ID, got.ResourceID)
		assert.Equal(t, &v.ID, got.ActiveVersionID)

		list, err := f.s.ListEnvironments(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		var names []string
		for _, e := range list {
			names = append(names, e.Name)
			assert.Equal(t, env.ResourcePrompt, e.ResourceType)
		}
		assert.Equal(t, []string{env.Production, "beta", "staging"}, names, "production first, then by name")
		assert.Equal(t, &v.ID, list[0].ActiveVersionID)
		assert.Nil(t, list[1].ActiveVersionID)
		assert.Equal(t, &v.ID, list[2].ActiveVersionID)
	})
	run(t, newStore, "CreateDuplicateConflict", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		f.Env(c, "staging")
		dup := &env.Environment{Name: "staging", ResourceID: c.ID, WorkspaceID: f.ws.ID, CreatedBy: "bob"}
		requireCode(t, canvas.ECONFLICT, f.s.CreateEnvironment(f.ctx, dup))
		f.Env(f.Canvas("d", nil, "alice"), "staging")
	})
	run(t, newStore, "CreateCanvasNotFound", func(t *testing.T, f *fixture) {
		e := &env.Environment{Name: "staging", ResourceID: missingID, WorkspaceID: f.ws.ID, CreatedBy: "bob"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateEnvironment(f.ctx, e))
		c := f.Canvas("c", nil, "alice")
		other := f.Workspace("other")
		e = &env.Environment{Name: "staging", ResourceID: c.ID, WorkspaceID: other.ID, CreatedBy: "bob"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateEnvironment(f.ctx, e))
	})
	run(t, newStore, "GetAndListNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.GetEnvironment(f.ctx, f.ws.ID, missingID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ListEnvironments(f.ctx, f.ws.ID, missingID)
		requireCode(t, canvas.ENOTFOUND, err)
		c := f.Canvas("c", nil, "alice")
		e := f.Env(c, "staging")
		other := f.Workspace("other")
		_, err = f.s.GetEnvironment(f.ctx, other.ID, e.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ListEnvironments(f.ctx, other.ID, c.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "DeleteRemovesHistory", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		e := f.Env(c, "staging")
		f.Publish(v, "staging")
		require.NoError(t, f.s.DeleteEnvironment(f.ctx, f.ws.ID, e.ID))
		_, err := f.s.GetEnvironment(f.ctx, f.ws.ID, e.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, _, err = f.s.ListPublications(f.ctx, f.ws.ID, e.ID, 20, 0)
		requireCode(t, canvas.ENOTFOUND, err)
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			By: "bob"}), "the version is no longer published")

		again := f.Env(c, "staging")
		page, total, err := f.s.ListPublications(f.ctx, f.ws.ID, again.ID, 20, 0)
		require.NoError(t, err)
		assert.Zero(t, total, "a new environment of the same name starts a new history")
		assert.Empty(t, page)
	})
	run(t, newStore, "DeleteProductionConflict", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		requireCode(t, canvas.ECONFLICT, f.s.DeleteEnvironment(f.ctx, f.ws.ID, prod.ID))
	})
	run(t, newStore, "DeleteNotFound", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteEnvironment(f.ctx, f.ws.ID, missingID))
		e := f.Env(f.Canvas("c", nil, "alice"), "staging")
		other := f.Workspace("other")
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteEnvironment(f.ctx, other.ID, e.ID))
		require.NoError(t, f.s.DeleteEnvironment(f.ctx, f.ws.ID, e.ID))
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteEnvironment(f.ctx, f.ws.ID, e.ID))
	})
}
