package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testMessages(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetList", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		md := "*u*"
		m := &canvas.Message{PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "u", MarkdownContent: &md, Index: 1, CreatedBy: "bob"}
		require.NoError(t, f.s.CreateMessage(f.ctx, f.ws.ID, m))
		assert.NotEmpty(t, m.ID)
		assert.False(t, m.CreatedAt.IsZero())
		got, err := f.s.GetMessage(f.ctx, f.ws.ID, m.ID)
		require.NoError(t, err)
		assert.Equal(t, v.ID, got.PromptVersionID)
		assert.Equal(t, canvas.RoleUser, got.Role)
		assert.Equal(t, "u", got.Content)
		assert.Equal(t, &md, got.MarkdownContent)
		assert.Equal(t, 1, got.Index)
		assert.Equal(t, "bob", got.CreatedBy)
		assert.Equal(t, "bob", got.UpdatedBy)
		assert.Nil(t, got.DeletedAt)

		early := &canvas.Message{PromptVersionID: v.ID, Role: canvas.RoleAssistant, Content: "a", Index: 0, CreatedBy: "bob"}
		require.NoError(t, f.s.CreateMessage(f.ctx, f.ws.ID, early))
		list, err := f.s.ListMessages(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{v.Messages[0].ID, early.ID, m.ID}, ids(list, messageID),
			"ordered by index, then creation")
	})
	run(t, newStore, "ClientIDKeptAndDuplicateConflict", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		id := "0d6f3c9e-58a4-4c43-9f0a-6a2b5b0f7a12"
		m := &canvas.Message{ID: id, PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "u", CreatedBy: "bob"}
		require.NoError(t, f.s.CreateMessage(f.ctx, f.ws.ID, m))
		assert.Equal(t, id, m.ID)
		again := &canvas.Message{ID: id, PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "u", CreatedBy: "bob"}
		requireCode(t, canvas.ECONFLICT, f.s.CreateMessage(f.ctx, f.ws.ID, again))
	})
	run(t, newStore, "CreateVersionNotFound", func(t *testing.T, f *fixture) {
		m := &canvas.Message{PromptVersionID: missingID, Role: canvas.RoleUser, Content: "u", CreatedBy: "bob"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateMessage(f.ctx, f.ws.ID, m))
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		other := f.Workspace("other")
		m = &canvas.Message{PromptVersionID: v.ID, Role: canvas.RoleUser, Content: "u", CreatedBy: "bob"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateMessage(f.ctx, other.ID, m))
	})
	run(t, newStore, "Update", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		md := "# new"
		got, err := f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: v.Messages[0].ID,
			Update: canvas.MessageUpdate{Content: ptr("new"), MarkdownContent: &md, Index: ptr(3),
				Role: ptr(canvas.RoleUser)}, By: "bob"})
		require.NoError(t, err)
		assert.Equal(t, "new", got.Content)
		assert.Equal(t, &md, got.MarkdownContent)
		assert.Equal(t, 3, got.Index)
		assert.Equal(t, canvas.RoleUser, got.Role)
		assert.Equal(t, "bob", got.UpdatedBy)
		assert.Equal(t, "alice", got.CreatedBy)
		version, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.Nil(t, version.Content, "a user message at index 3 is no prompt")
	})
	run(t, newStore, "UpdateNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: missingID,
			Update: canvas.MessageUpdate{Content: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "DeleteIsSoft", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		id := v.Messages[0].ID
		require.NoError(t, f.s.DeleteMessage(f.ctx, f.ws.ID, id))
		_, err := f.s.GetMessage(f.ctx, f.ws.ID, id)
		requireCode(t, canvas.ENOTFOUND, err)
		list, err := f.s.ListMessages(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.NotNil(t, list)
		assert.Empty(t, list)
		_, err = f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: id,
			Update: canvas.MessageUpdate{Content: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteMessage(f.ctx, f.ws.ID, id))
		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.Nil(t, got.Content)
		assert.Nil(t, got.Message)
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "prompt")
		other := f.Workspace("other")
		id := v.Messages[0].ID
		_, err := f.s.GetMessage(f.ctx, other.ID, id)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ListMessages(f.ctx, other.ID, v.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: other.ID, ID: id,
			Update: canvas.MessageUpdate{Content: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteMessage(f.ctx, other.ID, id))
	})
}
