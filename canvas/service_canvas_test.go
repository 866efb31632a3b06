package canvas_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestService_CreateCanvas(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c, err := f.Service.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Support", ProjectID: &f.Project.ID})
		require.NoError(t, err)
		assert.NotEmpty(t, c.ID)
		assert.Equal(t, "Support", c.Title)
		assert.Equal(t, &f.Project.ID, c.ProjectID)
		assert.Equal(t, f.Workspace.ID, c.WorkspaceID)
		assert.Equal(t, canvas.LayoutV1, c.LayoutVersion, "layoutVersion defaults to v1")
		assert.Equal(t, "0", c.InferencesPercentage, "inferencesPercentage defaults to 0")
		assert.Equal(t, []string{}, c.CustomTags)
		assert.Nil(t, c.AllowedCredentials, "allowedCredentials defaults to unrestricted")
		assert.Equal(t, canvas.PrincipalFrom(ctx).Actor(), c.CreatedBy)
		assert.Equal(t, c.CreatedBy, c.UpdatedBy)
		assert.Nil(t, c.DeletedAt)
		assert.Nil(t, c.Favorited, "no favorited field for an API key")

		got, err := f.Service.GetCanvas(ctx, c.ID)
		require.NoError(t, err)
		assert.Equal(t, c.Title, got.Title)
	})
	t.Run("AllFields", func(t *testing.T) {
		f := newFixture(t)
		cred := uuid.NewString()
		c, err := f.Service.CreateCanvas(f.Key(canvas.RoleEditor), canvas.CreateCanvasParams{
			Title: strings.Repeat("é", 256), ProjectID: &f.Project.ID, CustomTags: []string{"a", "b"},
			LayoutVersion: canvas.LayoutV2, InferencesPercentage: "12.5", AllowedCredentials: []string{cred},
		})
		require.NoError(t, err)
		assert.Equal(t, canvas.LayoutV2, c.LayoutVersion)
		assert.Equal(t, "12.5", c.InferencesPercentage)
		assert.Equal(t, []string{"a", "b"}, c.CustomTags)
		assert.Equal(t, []string{cred}, c.AllowedCredentials)
	})
	t.Run("Draft", func(t *testing.T) {
		f := newFixture(t)
		c, err := f.Service.CreateCanvas(f.User("alice", canvas.RoleEditor), canvas.CreateCanvasParams{Title: "Mine"})
		require.NoError(t, err)
		assert.Nil(t, c.ProjectID)
		assert.Equal(t, "alice", c.CreatedBy)
		require.NotNil(t, c.Favorited, "favorited is present for a user")
		assert.False(t, *c.Favorited)
	})
	t.Run("DraftWithoutUser", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateCanvas(f.Key(canvas.RoleEditor), canvas.CreateCanvasParams{Title: "Mine"})
		assertInvalid(t, err, "/json/projectId")
		assert.Contains(t, canvas.ErrorDetails(err)[0].Message, "user identity")
	})
	t.Run("Validation", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		tests := []struct {
			name   string
			params canvas.CreateCanvasParams
			paths  []string
		}{
			{"TitleMissing", canvas.CreateCanvasParams{ProjectID: &f.Project.ID}, []string{"/json/title"}},
			{"TitleTooLong", canvas.CreateCanvasParams{Title: strings.Repeat("é", 257), ProjectID: &f.Project.ID}, []string{"/json/title"}},
			{"LayoutVersion", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, LayoutVersion: "v3"}, []string{"/json/layoutVersion"}},
			{"PercentageAbove100", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, InferencesPercentage: "100.5"}, []string{"/json/inferencesPercentage"}},
			{"PercentageNegative", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, InferencesPercentage: "-1"}, []string{"/json/inferencesPercentage"}},
			{"PercentageNotDecimal", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, InferencesPercentage: "ten"}, []string{"/json/inferencesPercentage"}},
			{"EmptyTag", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, CustomTags: []string{"ok", " "}}, []string{"/json/customTags/1"}},
			{"Credential", canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID, AllowedCredentials: []string{"nope"}}, []string{"/json/allowedCredentials/0"}},
			{"ProjectID", canvas.CreateCanvasParams{Title: "t", ProjectID: ptr("nope")}, []string{"/json/projectId"}},
			{"Every", canvas.CreateCanvasParams{LayoutVersion: "x", InferencesPercentage: "x", ProjectID: ptr("x")},
				[]string{"/json/title", "/json/layoutVersion", "/json/inferencesPercentage", "/json/projectId"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := f.Service.CreateCanvas(ctx, tt.params)
				assertInvalid(t, err, tt.paths...)
			})
		}
	})
	t.Run("ProjectNotFound", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateCanvas(f.Key(canvas.RoleEditor), canvas.CreateCanvasParams{Title: "t", ProjectID: ptr(uuid.NewString())})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := newFixture(t)
		other := f.MustProject("other")
		_, err := f.Service.CreateCanvas(f.Key(canvas.RoleEditor, other.ID), canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.CreateCanvas(f.Key(canvas.RoleViewer), canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateCanvas(context.Background(), canvas.CreateCanvasParams{Title: "t", ProjectID: &f.Project.ID})
		assertCode(t, canvas.EUNAUTHORIZED, err)
	})
}

func TestService_GetCanvas(t *testing.T) {
	f := newFixture(t)
	alice := f.User("alice", canvas.RoleEditor)
	inProject := f.MustCanvas(alice, "shared", &f.Project.ID)
	draft := f.MustCanvas(alice, "mine", nil)

	t.Run("OK", func(t *testing.T) {
		c, err := f.Service.GetCanvas(f.Key(canvas.RoleViewer), inProject.ID)
		require.NoError(t, err)
		assert.Equal(t, inProject.ID, c.ID)
		assert.Nil(t, c.Favorited)
	})
	t.Run("OwnDraft", func(t *testing.T) {
		c, err := f.Service.GetCanvas(alice, draft.ID)
		require.NoError(t, err)
		assert.Equal(t, draft.ID, c.ID)
		assert.NotNil(t, c.Favorited)
	})
	t.Run("NotFound", func(t *testing.T) {
		for name, ctx := range map[string]context.Context{
			"OtherUsersDraft": f.User("bob", canvas.RoleAdmin),
			"KeyOnDraft":      f.Key(canvas.RoleAdmin),
		} {
			t.Run(name, func(t *testing.T) {
				_, err := f.Service.GetCanvas(ctx, draft.ID)
				assertCode(t, canvas.ENOTFOUND, err)
			})
		}
		_, err := f.Service.GetCanvas(alice, uuid.NewString())
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("OtherWorkspace", func(t *testing.T) {
		ws := &canvas.Workspace{Name: "elsewhere"}
		require.NoError(t, f.Store.CreateWorkspace(context.Background(), ws))
		ctx := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: ws.ID, KeyID: "k", Role: canvas.RoleAdmin})
		_, err := f.Service.GetCanvas(ctx, inProject.ID)
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		other := f.MustProject("other")
		_, err := f.Service.GetCanvas(f.Key(canvas.RoleViewer, other.ID), inProject.ID)
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_ListCanvases(t *testing.T) {
	f := newFixture(t)
	other := f.MustProject("other")
	alice := f.User("alice", canvas.RoleEditor)
	bob := f.User("bob", canvas.RoleEditor)
	a := f.MustCanvas(alice, "a", &f.Project.ID)
	b := f.MustCanvas(alice, "b", &other.ID)
	aliceDraft := f.MustCanvas(alice, "alice draft", nil)
	bobDraft := f.MustCanvas(bob, "bob draft", nil)
	deleted := f.MustCanvas(alice, "deleted", &f.Project.ID)
	require.NoError(t, f.Service.DeleteCanvas(alice, deleted.ID))

	ids := func(t *testing.T, list []*canvas.Canvas) []string {
		t.Helper()
		out := []string{}
		for _, c := range list {
			out = append(out, c.ID)
		}
		return out
	}
	tests := []struct {
		name   string
		ctx    context.Context
		params canvas.ListCanvasesParams
		want   []string
	}{
		{"User", alice, canvas.ListCanvasesParams{}, []string{a.ID, b.ID, aliceDraft.ID}},
		{"OtherUser", bob, canvas.ListCanvasesParams{}, []string{a.ID, b.ID, bobDraft.ID}},
		{"Key", f.Key(canvas.RoleViewer), canvas.ListCanvasesParams{}, []string{a.ID, b.ID}},
		{"RestrictedKey", f.Key(canvas.RoleViewer, other.ID), canvas.ListCanvasesParams{}, []string{b.ID}},
		{"Project", alice, canvas.ListCanvasesParams{ProjectID: f.Project.ID}, []string{a.ID}},
		{"SameWorkspace", alice, canvas.ListCanvasesParams{WorkspaceID: f.Workspace.ID}, []string{a.ID, b.ID, aliceDraft.ID}},
		{"OtherWorkspace", alice, canvas.ListCanvasesParams{WorkspaceID: uuid.NewString()}, []string{}},
		{"DraftsOnly", alice, canvas.ListCanvasesParams{DraftsOnly: true}, []string{aliceDraft.ID}},
		{"DraftsOnlyKey", f.Key(canvas.RoleAdmin), canvas.ListCanvasesParams{DraftsOnly: true}, []string{}},
		{"DraftsOnlyInProject", alice, canvas.ListCanvasesParams{DraftsOnly: true, ProjectID: f.Project.ID}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := f.Service.ListCanvases(tt.ctx, tt.params)
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, ids(t, list))
		})
	}
	t.Run("Favorited", func(t *testing.T) {
		_, err := f.Service.UpdateCanvas(bob, a.ID, canvas.CanvasUpdate{Favorited: ptr(true)})
		require.NoError(t, err)
		list, err := f.Service.ListCanvases(bob, canvas.ListCanvasesParams{ProjectID: f.Project.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].Favorited)
		assert.True(t, *list[0].Favorited)

		list, err = f.Service.ListCanvases(alice, canvas.ListCanvasesParams{ProjectID: f.Project.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].Favorited)
		assert.False(t, *list[0].Favorited, "a favorite belongs to one user")

		list, err = f.Service.ListCanvases(f.Key(canvas.RoleViewer), canvas.ListCanvasesParams{})
		require.NoError(t, err)
		for _, c := range list {
			assert.Nil(t, c.Favorited, "no favorited field for an API key")
		}
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, err := f.Service.ListCanvases(f.Key(canvas.RoleViewer, other.ID), canvas.ListCanvasesParams{ProjectID: f.Project.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		_, err := f.Service.ListCanvases(context.Background(), canvas.ListCanvasesParams{})
		assertCode(t, canvas.EUNAUTHORIZED, err)
	})
}

func TestService_UpdateCanvas(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		alice := f.User("alice", canvas.RoleEditor)
		c := f.MustCanvas(alice, "before", &f.Project.ID)
		editor := f.User("carol", canvas.RoleEditor)
		got, err := f.Service.UpdateCanvas(editor, c.ID, canvas.CanvasUpdate{
			Title: ptr("after"), LayoutVersion: ptr(canvas.LayoutV2), InferencesPercentage: ptr("100"),
			CustomTags: &[]string{"x"},
		})
		require.NoError(t, err)
		assert.Equal(t, "after", got.Title)
		assert.Equal(t, canvas.LayoutV2, got.LayoutVersion)
		assert.Equal(t, "100", got.InferencesPercentage)
		assert.Equal(t, []string{"x"}, got.CustomTags)
		assert.Equal(t, "alice", got.CreatedBy)
		assert.Equal(t, "carol", got.UpdatedBy)
	})
	t.Run("MoveToProject", func(t *testing.T) {
		f := newFixture(t)
		alice := f.User("alice", canvas.RoleEditor)
		c := f.MustCanvas(alice, "draft", nil)
		got, err := f.Service.UpdateCanvas(alice, c.ID, canvas.CanvasUpdate{ProjectID: ptr(&f.Project.ID)})
		require.NoError(t, err)
		assert.Equal(t, &f.Project.ID, got.ProjectID)

		got, err = f.Service.UpdateCanvas(alice, c.ID, canvas.CanvasUpdate{ProjectID: ptr[*string](nil)})
		require.NoError(t, err)
		assert.Nil(t, got.ProjectID, "the creator can make it a draft again")
	})
	t.Run("DraftOfSomeoneElse", func(t *testing.T) {
		f := newFixture(t)
		c := f.MustCanvas(f.User("alice", canvas.RoleEditor), "shared", &f.Project.ID)
		_, err := f.Service.UpdateCanvas(f.User("bob", canvas.RoleEditor), c.ID, canvas.CanvasUpdate{ProjectID: ptr[*string](nil)})
		assertInvalid(t, err, "/json/projectId")
	})
	t.Run("FavoritedByViewer", func(t *testing.T) {
		f := newFixture(t)
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "shared", &f.Project.ID)
		viewer := f.User("vera", canvas.RoleViewer)
		got, err := f.Service.UpdateCanvas(viewer, c.ID, canvas.CanvasUpdate{Favorited: ptr(true)})
		require.NoError(t, err)
		require.NotNil(t, got.Favorited)
		assert.True(t, *got.Favorited)

		_, err = f.Service.UpdateCanvas(viewer, c.ID, canvas.CanvasUpdate{Favorited: ptr(false), Title: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
	t.Run("Validation", func(t *testing.T) {
		f := newFixture(t)
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "shared", &f.Project.ID)
		_, err := f.Service.UpdateCanvas(f.Key(canvas.RoleEditor), c.ID, canvas.CanvasUpdate{
			Title: ptr(""), LayoutVersion: ptr("v9"), InferencesPercentage: ptr("1e3"),
			AllowedCredentials: &[]string{"bad"}, Favorited: ptr(true), ProjectID: ptr(ptr("bad")),
		})
		assertInvalid(t, err, "/json/title", "/json/layoutVersion", "/json/inferencesPercentage",
			"/json/allowedCredentials/0", "/json/favorited", "/json/projectId")
	})
	t.Run("NotFound", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.UpdateCanvas(f.Key(canvas.RoleEditor), uuid.NewString(), canvas.CanvasUpdate{Title: ptr("x")})
		assertCode(t, canvas.ENOTFOUND, err)
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "shared", &f.Project.ID)
		_, err = f.Service.UpdateCanvas(f.Key(canvas.RoleEditor), c.ID, canvas.CanvasUpdate{ProjectID: ptr(ptr(uuid.NewString()))})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := newFixture(t)
		other := f.MustProject("other")
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "shared", &f.Project.ID)
		_, err := f.Service.UpdateCanvas(f.Key(canvas.RoleEditor, other.ID), c.ID, canvas.CanvasUpdate{Title: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.UpdateCanvas(f.Key(canvas.RoleViewer), c.ID, canvas.CanvasUpdate{Title: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.UpdateCanvas(f.Key(canvas.RoleEditor, f.Project.ID), c.ID, canvas.CanvasUpdate{ProjectID: ptr(&other.ID)})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_DeleteCanvas(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "doomed", &f.Project.ID)
		v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
		require.NoError(t, f.Service.DeleteCanvas(ctx, c.ID))

		_, err := f.Service.GetCanvas(ctx, c.ID)
		assertCode(t, canvas.ENOTFOUND, err)
		_, err = f.Service.GetVersion(ctx, v.ID)
		assertCode(t, canvas.ENOTFOUND, err) // its versions vanish too
		list, err := f.Service.ListCanvases(ctx, canvas.ListCanvasesParams{})
		require.NoError(t, err)
		assert.Empty(t, list)
		assertCode(t, canvas.ENOTFOUND, f.Service.DeleteCanvas(ctx, c.ID))
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := newFixture(t)
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "kept", &f.Project.ID)
		assertCode(t, canvas.EFORBIDDEN, f.Service.DeleteCanvas(f.Key(canvas.RoleViewer), c.ID))
		_, err := f.Service.GetCanvas(f.Key(canvas.RoleViewer), c.ID)
		assert.NoError(t, err)
	})
}

// knownCredentials are the credential ids of every workspace, for the
// check of allowedCredentials.
type knownCredentials map[string]bool

func (k knownCredentials) Unknown(_ context.Context, _ string, ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		if !k[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func TestService_AllowedCredentials(t *testing.T) {
	f := newFixture(t)
	known := uuid.NewString()
	f.Service = canvas.NewService(canvas.Options{Store: f.Store, Credentials: knownCredentials{known: true}})
	ctx := f.Key(canvas.RoleEditor)
	stranger := uuid.NewString()

	_, err := f.Service.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "c", ProjectID: &f.Project.ID,
		AllowedCredentials: []string{known, stranger}})
	assertInvalid(t, err, "/json/allowedCredentials/1")

	c, err := f.Service.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "c", ProjectID: &f.Project.ID,
		AllowedCredentials: []string{known}})
	require.NoError(t, err)
	assert.Equal(t, []string{known}, c.AllowedCredentials)

	list := []string{stranger}
	_, err = f.Service.UpdateCanvas(ctx, c.ID, canvas.CanvasUpdate{AllowedCredentials: &list})
	assertInvalid(t, err, "/json/allowedCredentials/0")
	got, err := f.Service.GetCanvas(ctx, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{known}, got.AllowedCredentials, "a refused update changes nothing")
}
