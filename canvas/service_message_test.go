package canvas_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versionFixture is a fixture with one canvas and one empty version.
func versionFixture(t *testing.T) (*fixture, *canvas.Version) {
	t.Helper()
	f := newFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	c := f.MustCanvas(ctx, "c", &f.Project.ID)
	return f, f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
}

func TestService_CreateMessage(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, v := versionFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		id := uuid.NewString()
		m, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{
			ID: id, PromptVersionID: v.ID, Role: canvas.RoleSystem, Content: "Hi {{x}}", MarkdownContent: ptr("*Hi*"),
		})
		require.NoError(t, err)
		assert.Equal(t, id, m.ID, "a client-supplied id is kept")
		assert.Equal(t, v.ID, m.PromptVersionID)
		assert.Equal(t, 0, m.Index)
		assert.Equal(t, canvas.PrincipalFrom(ctx).Actor(), m.CreatedBy)
		assert.False(t, m.CreatedAt.IsZero())

		got, err := f.Service.GetVersion(ctx, v.ID)
		require.NoError(t, err)
		require.NotNil(t, got.Content)
		assert.Equal(t, "Hi {{x}}", *got.Content, "the prompt is read from the system message at index 0")

		_, err = f.Service.CreateMessage(ctx, canvas.CreateMessageParams{ID: id, PromptVersionID: v.ID, Role: canvas.RoleUser})
		assertCode(t, canvas.ECONFLICT, err)
	})
	t.Run("NotThePrompt", func(t *testing.T) {
		f, v := versionFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		_, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "u"})
		require.NoError(t, err)
		got, err := f.Service.GetVersion(ctx, v.ID)
		require.NoError(t, err)
		assert.Nil(t, got.Content, "a user message is not read as the prompt")
		require.NotNil(t, got.Message)
		assert.Equal(t, "u", got.Message.Content, "message is messages[0] whatever its role")
	})
	t.Run("Validation", func(t *testing.T) {
		f, v := versionFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		_, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{ID: "x", PromptVersionID: "y", Role: "robot", Index: -1})
		assertInvalid(t, err, "/json/id", "/json/promptVersionId", "/json/role", "/json/index")
		_, err = f.Service.CreateMessage(ctx, canvas.CreateMessageParams{PromptVersionID: v.ID})
		assertInvalid(t, err, "/json/role")
	})
	t.Run("NotFound", func(t *testing.T) {
		f, _ := versionFixture(t)
		_, err := f.Service.CreateMessage(f.Key(canvas.RoleEditor), canvas.CreateMessageParams{PromptVersionID: uuid.NewString(), Role: canvas.RoleUser})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		f, v := versionFixture(t)
		_, err := f.Service.CreateMessage(f.Key(canvas.RoleViewer), canvas.CreateMessageParams{PromptVersionID: v.ID, Role: canvas.RoleUser})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.CreateMessage(f.Key(canvas.RoleEditor, uuid.NewString()), canvas.CreateMessageParams{PromptVersionID: v.ID, Role: canvas.RoleUser})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_ListMessages(t *testing.T) {
	f, v := versionFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	for _, in := range []struct {
		role  string
		index int
	}{{canvas.RoleAssistant, 2}, {canvas.RoleSystem, 0}, {canvas.RoleUser, 1}} {
		_, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{PromptVersionID: v.ID, Role: in.role, Content: in.role, Index: in.index})
		require.NoError(t, err)
	}

	t.Run("OK", func(t *testing.T) {
		list, err := f.Service.ListMessages(f.Key(canvas.RoleViewer), canvas.ListMessagesParams{PromptVersionID: v.ID})
		require.NoError(t, err)
		require.Len(t, list, 3)
		for i, want := range []string{canvas.RoleSystem, canvas.RoleUser, canvas.RoleAssistant} {
			assert.Equal(t, i, list[i].Index, "ordered by index")
			assert.Equal(t, want, list[i].Role)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		_, err := f.Service.ListMessages(ctx, canvas.ListMessagesParams{PromptVersionID: uuid.NewString()})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, err := f.Service.ListMessages(f.Key(canvas.RoleViewer, uuid.NewString()), canvas.ListMessagesParams{PromptVersionID: v.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_UpdateMessage(t *testing.T) {
	f, v := versionFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	m, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "a", Index: 1})
	require.NoError(t, err)

	t.Run("OK", func(t *testing.T) {
		editor := f.User("erin", canvas.RoleEditor)
		got, err := f.Service.UpdateMessage(editor, m.ID, canvas.MessageUpdate{
			Role: ptr(canvas.RoleSystem), Content: ptr("b"), MarkdownContent: ptr("**b**"), Index: ptr(0),
		})
		require.NoError(t, err)
		assert.Equal(t, canvas.RoleSystem, got.Role)
		assert.Equal(t, "b", got.Content)
		require.NotNil(t, got.MarkdownContent)
		assert.Equal(t, "**b**", *got.MarkdownContent)
		assert.Equal(t, 0, got.Index)
		assert.Equal(t, "erin", got.UpdatedBy)

		ver, err := f.Service.GetVersion(ctx, v.ID)
		require.NoError(t, err)
		require.NotNil(t, ver.Content)
		assert.Equal(t, "b", *ver.Content)
	})
	t.Run("Validation", func(t *testing.T) {
		_, err := f.Service.UpdateMessage(ctx, m.ID, canvas.MessageUpdate{Role: ptr("robot"), Index: ptr(-2)})
		assertInvalid(t, err, "/json/role", "/json/index")
	})
	t.Run("NotFound", func(t *testing.T) {
		_, err := f.Service.UpdateMessage(ctx, uuid.NewString(), canvas.MessageUpdate{Content: ptr("x")})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, err := f.Service.UpdateMessage(f.Key(canvas.RoleViewer), m.ID, canvas.MessageUpdate{Content: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_DeleteMessage(t *testing.T) {
	f, v := versionFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	m, err := f.Service.CreateMessage(ctx, canvas.CreateMessageParams{PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "a"})
	require.NoError(t, err)

	t.Run("Forbidden", func(t *testing.T) {
		assertCode(t, canvas.EFORBIDDEN, f.Service.DeleteMessage(f.Key(canvas.RoleViewer), m.ID))
	})
	t.Run("OK", func(t *testing.T) {
		require.NoError(t, f.Service.DeleteMessage(ctx, m.ID))
		list, err := f.Service.ListMessages(ctx, canvas.ListMessagesParams{PromptVersionID: v.ID})
		require.NoError(t, err)
		assert.Empty(t, list)
	})
	t.Run("NotFound", func(t *testing.T) {
		assertCode(t, canvas.ENOTFOUND, f.Service.DeleteMessage(ctx, m.ID))
	})
}
