package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testCanvases(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetRoundTrip", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		c := &canvas.Canvas{Title: "Greeter", ProjectID: &p.ID, InferencesPercentage: "12.5",
			LayoutVersion: canvas.LayoutV1, WorkspaceID: f.ws.ID, CustomTags: []string{"a", "b"},
			AllowedCredentials: []string{"cred-1"}, CreatedBy: "alice"}
		require.NoError(t, f.s.CreateCanvas(f.ctx, c))
		require.NotEmpty(t, c.ID)
		got, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID})
		require.NoError(t, err)
		assert.Equal(t, "Greeter", got.Title)
		assert.Equal(t, &p.ID, got.ProjectID)
		assert.Equal(t, "12.5", got.InferencesPercentage)
		assert.Equal(t, canvas.LayoutV1, got.LayoutVersion)
		assert.Equal(t, []string{"a", "b"}, got.CustomTags)
		assert.Equal(t, []string{"cred-1"}, got.AllowedCredentials)
		assert.Equal(t, "alice", got.CreatedBy)
		assert.Equal(t, "alice", got.UpdatedBy)
		assert.True(t, got.CreatedAt.Equal(got.UpdatedAt))
		assert.Nil(t, got.DeletedAt)
		assert.Nil(t, got.DeletedBy)
		assert.Nil(t, got.Favorited, "no user, no favorited")
		assert.Nil(t, got.Versions)
	})
	run(t, newStore, "EmptyTagsAndUnrestrictedCredentials", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		got, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID, UserID: "alice"})
		require.NoError(t, err)
		assert.NotNil(t, got.CustomTags)
		assert.Empty(t, got.CustomTags)
		assert.Nil(t, got.AllowedCredentials, "null means unrestricted")
		assert.Nil(t, got.ProjectID)
		require.NotNil(t, got.Favorited, "a user gets favorited")
		assert.False(t, *got.Favorited)
	})
	run(t, newStore, "CreateUnknownProjectNotFound", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		p := &canvas.Project{Name: "theirs", WorkspaceID: other.ID}
		require.NoError(t, f.s.CreateProject(f.ctx, p))
		for _, id := range []string{"4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10", p.ID} {
			c := &canvas.Canvas{Title: "c", ProjectID: &id, WorkspaceID: f.ws.ID, CreatedBy: "alice"}
			requireCode(t, canvas.ENOTFOUND, f.s.CreateCanvas(f.ctx, c))
		}
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID,
			ID: "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		other := f.Workspace("other")
		_, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: other.ID, ID: c.ID})
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: other.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: other.ID,
			ID: c.ID, By: "bob"}))
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: other.ID, OwnerID: "alice"})
		require.NoError(t, err)
		assert.Empty(t, list)
	})
	run(t, newStore, "UpdateFields", func(t *testing.T, f *fixture) {
		p, q := f.Project("p"), f.Project("q")
		c := f.Canvas("c", p, "alice")
		got, err := f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{
				Title: ptr("renamed"), ProjectID: ptr(&q.ID), InferencesPercentage: ptr("50"),
				LayoutVersion: ptr(canvas.LayoutV1), CustomTags: &[]string{"x"}, AllowedCredentials: &[]string{"k"},
			}, By: "bob"})
		require.NoError(t, err)
		assert.Equal(t, "renamed", got.Title)
		assert.Equal(t, &q.ID, got.ProjectID)
		assert.Equal(t, "50", got.InferencesPercentage)
		assert.Equal(t, canvas.LayoutV1, got.LayoutVersion)
		assert.Equal(t, []string{"x"}, got.CustomTags)
		assert.Equal(t, []string{"k"}, got.AllowedCredentials)
		assert.Equal(t, "bob", got.UpdatedBy)
		assert.Equal(t, "alice", got.CreatedBy)
		assert.False(t, got.UpdatedAt.Before(got.CreatedAt))

		got, err = f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{ProjectID: ptr[*string](nil), AllowedCredentialsNull: true}, By: "bob"})
		require.NoError(t, err)
		assert.Nil(t, got.ProjectID, "moved to personal drafts")
		assert.Nil(t, got.AllowedCredentials)
		assert.Equal(t, "renamed", got.Title, "fields not given stay")
	})
	run(t, newStore, "UpdateUnknownProjectNotFound", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		missing := "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10"
		_, err := f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{ProjectID: ptr(&missing)}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "FavoritesArePerUser", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		got, err := f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{Favorited: ptr(true)}, By: "alice", UserID: "alice"})
		require.NoError(t, err)
		require.NotNil(t, got.Favorited)
		assert.True(t, *got.Favorited)
		bobs, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID, UserID: "bob"})
		require.NoError(t, err)
		require.NotNil(t, bobs.Favorited)
		assert.False(t, *bobs.Favorited)
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, UserID: "alice"})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].Favorited)
		assert.True(t, *list[0].Favorited)

		got, err = f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{Favorited: ptr(false)}, By: "alice", UserID: "alice"})
		require.NoError(t, err)
		assert.False(t, *got.Favorited)
	})
	run(t, newStore, "UpdateNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID,
			ID: "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10", Update: canvas.CanvasUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "DeleteIsSoftAndHidesEverything", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v := f.Version(c, "hello")
		e := f.Env(c, "staging")
		f.Publish(v, env.Production)
		require.NoError(t, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			By: "bob"}))

		_, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID})
		requireCode(t, canvas.ENOTFOUND, err)
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID})
		require.NoError(t, err)
		assert.Empty(t, list)
		_, err = f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ListVersions(f.ctx, f.ws.ID, c.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetMessage(f.ctx, f.ws.ID, v.Messages[0].ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetEnvironment(f.ctx, f.ws.ID, e.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		requireCode(t, canvas.ENOTFOUND, err)
		_, _, err = f.s.ListPublications(f.ctx, f.ws.ID, e.ID, 20, 0)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID,
			ID: c.ID, By: "bob"}))
	})
}

func testCanvasList(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "NewestFirst", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		a, b, c := f.Canvas("a", p, "alice"), f.Canvas("b", p, "alice"), f.Canvas("c", p, "alice")
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID})
		require.NoError(t, err)
		assert.Equal(t, []string{c.ID, b.ID, a.ID}, ids(list, canvasID))
		for _, got := range list {
			assert.Nil(t, got.Favorited, "no user, no favorited")
			assert.Nil(t, got.Versions, "versions only when asked")
		}
	})
	run(t, newStore, "ProjectFilterAndRestriction", func(t *testing.T, f *fixture) {
		p, q := f.Project("p"), f.Project("q")
		inP, inQ := f.Canvas("in-p", p, "alice"), f.Canvas("in-q", q, "alice")
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, ProjectID: &p.ID})
		require.NoError(t, err)
		assert.Equal(t, []string{inP.ID}, ids(list, canvasID))
		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, Projects: []string{q.ID}})
		require.NoError(t, err)
		assert.Equal(t, []string{inQ.ID}, ids(list, canvasID))
		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, ProjectID: &p.ID, Projects: []string{q.ID}})
		require.NoError(t, err)
		assert.Empty(t, list, "a project outside the restriction lists nothing")
		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, Projects: []string{}})
		require.NoError(t, err)
		assert.Empty(t, list, "an empty restriction allows no project")
	})
	run(t, newStore, "DraftsVisibleOnlyToOwner", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		shared := f.Canvas("shared", p, "bob")
		mine := f.Canvas("mine", nil, "alice")
		f.Canvas("bobs-draft", nil, "bob")

		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, OwnerID: "alice"})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{shared.ID, mine.ID}, ids(list, canvasID))

		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, OwnerID: "alice", Projects: []string{}})
		require.NoError(t, err)
		assert.Equal(t, []string{mine.ID}, ids(list, canvasID), "own drafts survive a project restriction")

		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID})
		require.NoError(t, err)
		assert.Equal(t, []string{shared.ID}, ids(list, canvasID), "no owner, no drafts")

		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, OwnerID: "alice", DraftsOnly: true})
		require.NoError(t, err)
		assert.Equal(t, []string{mine.ID}, ids(list, canvasID))

		list, err = f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, DraftsOnly: true})
		require.NoError(t, err)
		assert.NotNil(t, list)
		assert.Empty(t, list, "drafts only without an owner is empty")
	})
	run(t, newStore, "IncludeVersions", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		empty := f.Canvas("empty", p, "alice")
		c := f.Canvas("c", p, "alice")
		v1 := f.Version(c, "one")
		v2 := f.Version(c, "two")
		v3 := f.Version(c, "three")
		f.Publish(v1, env.Production)
		f.Publish(v2, env.Production)
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v3.ID,
			By: "alice"}))

		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, IncludeVersions: true})
		require.NoError(t, err)
		require.Equal(t, []string{c.ID, empty.ID}, ids(list, canvasID))
		require.NotNil(t, list[0].Versions)
		require.NotNil(t, list[0].Versions.Promoted)
		require.NotNil(t, list[0].Versions.Latest)
		assert.Equal(t, v2.ID, list[0].Versions.Promoted.ID)
		assert.True(t, list[0].Versions.Promoted.Promoted)
		assert.Equal(t, v2.ID, list[0].Versions.Latest.ID, "a deleted version is not the latest")
		require.NotNil(t, list[0].Versions.Latest.Content)
		assert.Equal(t, "two", *list[0].Versions.Latest.Content, "included versions are filled")
		assert.Len(t, list[0].Versions.Latest.Messages, 1)

		require.NotNil(t, list[1].Versions, "asked for, so present even when empty")
		assert.Nil(t, list[1].Versions.Promoted)
		assert.Nil(t, list[1].Versions.Latest)
	})
	run(t, newStore, "IncludeVersionsWithoutPromotion", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		f.Version(c, "one")
		v2 := f.Version(c, "two")
		list, err := f.s.ListCanvases(f.ctx, canvas.CanvasFilter{WorkspaceID: f.ws.ID, IncludeVersions: true})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].Versions)
		assert.Nil(t, list[0].Versions.Promoted)
		require.NotNil(t, list[0].Versions.Latest)
		assert.Equal(t, v2.ID, list[0].Versions.Latest.ID)
		assert.Equal(t, 2, list[0].Versions.Latest.VersionIndex)
	})
}
