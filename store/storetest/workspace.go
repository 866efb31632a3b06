package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testWorkspaces(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "PingAnswers", func(t *testing.T, f *fixture) {
		assert.NoError(t, f.s.Ping(f.ctx))
	})
	run(t, newStore, "CreateSetsIDAndTime", func(t *testing.T, f *fixture) {
		assert.NotEmpty(t, f.ws.ID)
		assert.False(t, f.ws.CreatedAt.IsZero())
		got, err := f.s.GetWorkspaceByName(f.ctx, "acme")
		require.NoError(t, err)
		assert.Equal(t, f.ws.ID, got.ID)
		assert.True(t, f.ws.CreatedAt.Equal(got.CreatedAt))
	})
	run(t, newStore, "DuplicateNameConflict", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.ECONFLICT, f.s.CreateWorkspace(f.ctx, &canvas.Workspace{Name: "acme"}))
	})
	run(t, newStore, "GetByID", func(t *testing.T, f *fixture) {
		got, err := f.s.GetWorkspace(f.ctx, f.ws.ID)
		require.NoError(t, err)
		assert.Equal(t, "acme", got.Name)
		_, err = f.s.GetWorkspace(f.ctx, missingID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "GetByNameNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.GetWorkspaceByName(f.ctx, "nope")
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ListOldestFirst", func(t *testing.T, f *fixture) {
		second := f.Workspace("second")
		list, err := f.s.ListWorkspaces(f.ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, []string{f.ws.ID, second.ID}, []string{list[0].ID, list[1].ID})
	})
}

func testProjects(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetList", func(t *testing.T, f *fixture) {
		a, b := f.Project("a"), f.Project("b")
		assert.NotEmpty(t, a.ID)
		assert.False(t, a.CreatedAt.IsZero())
		got, err := f.s.GetProject(f.ctx, f.ws.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "a", got.Name)
		assert.Equal(t, f.ws.ID, got.WorkspaceID)
		list, err := f.s.ListProjects(f.ctx, f.ws.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, []string{a.ID, b.ID}, []string{list[0].ID, list[1].ID})
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		p := f.Project("a")
		other := f.Workspace("other")
		_, err := f.s.GetProject(f.ctx, other.ID, p.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		list, err := f.s.ListProjects(f.ctx, other.ID)
		require.NoError(t, err)
		assert.Empty(t, list)
	})
}

func testAPIKeys(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetByHash", func(t *testing.T, f *fixture) {
		token, k := canvas.NewAPIKey(f.ws.ID, canvas.RoleEditor, []string{"p1", "p2"})
		k.Name = "Ada's laptop"
		require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
		got, err := f.s.GetAPIKeyByHash(f.ctx, canvas.HashToken(token))
		require.NoError(t, err)
		assert.Equal(t, k.ID, got.ID)
		assert.Equal(t, "Ada's laptop", got.Name)
		assert.Equal(t, canvas.RoleEditor, got.Role)
		assert.Equal(t, []string{"p1", "p2"}, got.Projects)
		assert.Equal(t, f.ws.ID, got.WorkspaceID)
		assert.Nil(t, got.RevokedAt)
		assert.False(t, got.CreatedAt.IsZero())
	})
	run(t, newStore, "AllProjectsStayNil", func(t *testing.T, f *fixture) {
		token, k := canvas.NewAPIKey(f.ws.ID, canvas.RoleAdmin, nil)
		require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
		got, err := f.s.GetAPIKeyByHash(f.ctx, canvas.HashToken(token))
		require.NoError(t, err)
		assert.Nil(t, got.Projects)
		assert.Empty(t, got.Name, "a key made without a name has none")
	})
	run(t, newStore, "DuplicateHashConflict", func(t *testing.T, f *fixture) {
		_, k := canvas.NewAPIKeyWithToken("0b5c5f7e-4a39-4c53-9a55-3d1f1b0e9b11", f.ws.ID, canvas.RoleViewer, nil)
		require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
		_, again := canvas.NewAPIKeyWithToken("0b5c5f7e-4a39-4c53-9a55-3d1f1b0e9b11", f.ws.ID, canvas.RoleViewer, nil)
		requireCode(t, canvas.ECONFLICT, f.s.CreateAPIKey(f.ctx, again))
	})
	run(t, newStore, "GetByHashNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.GetAPIKeyByHash(f.ctx, canvas.HashToken("missing"))
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ListByWorkspaceOrAll", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		_, k1 := canvas.NewAPIKey(f.ws.ID, canvas.RoleViewer, nil)
		_, k2 := canvas.NewAPIKey(other.ID, canvas.RoleViewer, nil)
		_, k3 := canvas.NewAPIKey(f.ws.ID, canvas.RoleAdmin, nil)
		for _, k := range []*canvas.APIKey{k1, k2, k3} {
			require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
		}
		mine, err := f.s.ListAPIKeys(f.ctx, f.ws.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{k1.ID, k3.ID}, []string{mine[0].ID, mine[1].ID})
		assert.Len(t, mine, 2)
		all, err := f.s.ListAPIKeys(f.ctx, "")
		require.NoError(t, err)
		assert.Len(t, all, 3)
	})
	run(t, newStore, "PageAndGetInWorkspace", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		var mine []string
		for i := range 5 {
			_, k := canvas.NewAPIKey(f.ws.ID, canvas.RoleViewer, nil)
			require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
			mine = append(mine, k.ID)
			if i == 2 {
				_, o := canvas.NewAPIKey(other.ID, canvas.RoleAdmin, nil)
				require.NoError(t, f.s.CreateAPIKey(f.ctx, o))
				_, err := f.s.GetAPIKey(f.ctx, f.ws.ID, o.ID)
				requireCode(t, canvas.ENOTFOUND, err)
				got, err := f.s.GetAPIKey(f.ctx, other.ID, o.ID)
				require.NoError(t, err)
				assert.Equal(t, o.ID, got.ID)
			}
		}
		all, err := f.s.ListAPIKeys(f.ctx, f.ws.ID)
		require.NoError(t, err)
		var order []string
		for _, k := range all {
			order = append(order, k.ID)
		}
		require.ElementsMatch(t, mine, order)
		var paged []string
		for offset := 0; offset < 6; offset += 2 {
			page, total, err := f.s.PageAPIKeys(f.ctx, f.ws.ID, 2, offset)
			require.NoError(t, err)
			assert.Equal(t, 5, total)
			assert.LessOrEqual(t, len(page), 2)
			for _, k := range page {
				assert.Equal(t, f.ws.ID, k.WorkspaceID)
				paged = append(paged, k.ID)
			}
		}
		assert.Equal(t, order, paged, "the pages follow the list's order")
		page, total, err := f.s.PageAPIKeys(f.ctx, f.ws.ID, 2, 10)
		require.NoError(t, err)
		assert.Empty(t, page)
		assert.Equal(t, 5, total)
		got, err := f.s.GetAPIKey(f.ctx, f.ws.ID, mine[1])
		require.NoError(t, err)
		assert.Equal(t, mine[1], got.ID)
		_, err = f.s.GetAPIKey(f.ctx, f.ws.ID, "01a2138c-0000-7000-8000-000000000000")
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "RevokeIsIdempotent", func(t *testing.T, f *fixture) {
		token, k := canvas.NewAPIKey(f.ws.ID, canvas.RoleViewer, nil)
		require.NoError(t, f.s.CreateAPIKey(f.ctx, k))
		require.NoError(t, f.s.RevokeAPIKey(f.ctx, k.ID))
		first, err := f.s.GetAPIKeyByHash(f.ctx, canvas.HashToken(token))
		require.NoError(t, err)
		require.NotNil(t, first.RevokedAt)
		require.NoError(t, f.s.RevokeAPIKey(f.ctx, k.ID))
		second, err := f.s.GetAPIKeyByHash(f.ctx, canvas.HashToken(token))
		require.NoError(t, err)
		require.NotNil(t, second.RevokedAt)
		assert.True(t, first.RevokedAt.Equal(*second.RevokedAt), "a second revoke changes nothing")
	})
	run(t, newStore, "RevokeNotFound", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.ENOTFOUND, f.s.RevokeAPIKey(f.ctx, "0b5c5f7e-4a39-4c53-9a55-3d1f1b0e9b11"))
	})
}
