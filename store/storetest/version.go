package storetest

import (
	"encoding/json"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const missingID = "4b0c55a4-0d3d-4b8e-8f3e-0f3c1e9f3a10"

func testVersions(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateFillsVersion", func(t *testing.T, f *fixture) {
		c := &canvas.Canvas{Title: "c", WorkspaceID: f.ws.ID, CustomTags: []string{"tag"}, CreatedBy: "alice"}
		require.NoError(t, f.s.CreateCanvas(f.ctx, c))
		md := "**hi** {{name}}"
		temp := 0.7
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "first", CreatedBy: "alice", Draft: true,
			Configuration: canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp},
			Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
			Messages: []canvas.Message{
				{ID: "0d6f3c9e-58a4-4c43-9f0a-6a2b5b0f7a11", Role: canvas.RoleSystem, Content: "hi {{name}}", MarkdownContent: &md},
				{Role: canvas.RoleUser, Content: "question", Index: 1},
			}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		assert.NotEmpty(t, v.ID)
		assert.Equal(t, 1, v.VersionIndex)

		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.Equal(t, c.ID, got.PromptID)
		assert.Equal(t, f.ws.ID, got.WorkspaceID)
		assert.Equal(t, "first", got.Title)
		assert.True(t, got.Draft)
		assert.False(t, got.Promoted)
		assert.Equal(t, 1, got.VersionIndex)
		assert.Equal(t, []string{"tag"}, got.PromptCustomTags)
		assert.Equal(t, "echo", got.Configuration.Model)
		require.NotNil(t, got.Configuration.Temperature)
		assert.InDelta(t, 0.7, *got.Configuration.Temperature, 1e-9)
		assert.Equal(t, v.Variables, got.Variables)
		require.Len(t, got.Messages, 2)
		assert.Equal(t, "0d6f3c9e-58a4-4c43-9f0a-6a2b5b0f7a11", got.Messages[0].ID, "client ids are kept")
		assert.Equal(t, v.ID, got.Messages[1].PromptVersionID)
		assert.Equal(t, "alice", got.Messages[1].CreatedBy)
		require.NotNil(t, got.Message)
		assert.Equal(t, got.Messages[0], *got.Message)
		require.NotNil(t, got.Content)
		assert.Equal(t, "hi {{name}}", *got.Content)
		assert.Equal(t, &md, got.MarkdownContent)
		assert.Nil(t, got.OriginVersionID)
		assert.Nil(t, got.DeletedAt)
		assert.Nil(t, got.WorkflowSpec)
		assert.Equal(t, got, v, "CreateVersion fills v as GetVersion does")
	})
	run(t, newStore, "EmptyTitleNamesThePosition", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		first := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "named", CreatedBy: "alice"}
		require.NoError(t, f.s.CreateVersion(f.ctx, first))
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: first.ID,
			By: "alice"}))
		second := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, CreatedBy: "alice"}
		require.NoError(t, f.s.CreateVersion(f.ctx, second))
		assert.Equal(t, 2, second.VersionIndex, "positions are never reused")
		assert.Equal(t, "Version 2", second.Title, "the default title names the position")
	})
	run(t, newStore, "EmptyVersionHasEmptyArrays", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice"}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.NotNil(t, got.Messages)
		assert.Empty(t, got.Messages)
		assert.NotNil(t, got.Variables)
		assert.NotNil(t, got.PromptCustomTags)
		assert.Nil(t, got.Message)
		assert.Nil(t, got.Content)
		assert.Nil(t, got.MarkdownContent)
	})
	run(t, newStore, "PromptIsSystemMessageAtIndexZero", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Messages: []canvas.Message{{Role: canvas.RoleUser, Content: "not a prompt"}}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		require.NotNil(t, v.Message)
		assert.Equal(t, "not a prompt", v.Message.Content)
		assert.Nil(t, v.Content, "a user message is not read as the prompt")
	})
	run(t, newStore, "WorkflowRoundTrip", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "wf", CreatedBy: "alice", IsWorkflow: true,
			WorkflowSpec: json.RawMessage(`{"nodes":[]}`), Graph: json.RawMessage(`{"edges":[]}`)}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.True(t, got.IsWorkflow)
		assert.JSONEq(t, `{"nodes":[]}`, string(got.WorkflowSpec))
		assert.JSONEq(t, `{"edges":[]}`, string(got.Graph))
	})
	run(t, newStore, "CreateCanvasNotFound", func(t *testing.T, f *fixture) {
		v := &canvas.Version{PromptID: missingID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateVersion(f.ctx, v))
		c := f.Canvas("c", nil, "alice")
		other := f.Workspace("other")
		v = &canvas.Version{PromptID: c.ID, WorkspaceID: other.ID, Title: "t", CreatedBy: "alice"}
		requireCode(t, canvas.ENOTFOUND, f.s.CreateVersion(f.ctx, v))
	})
	run(t, newStore, "CreateDuplicateMessageIDConflict", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		first := f.Version(c, "one")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Messages: []canvas.Message{{ID: first.Messages[0].ID, Role: canvas.RoleSystem, Content: "dup"}}}
		requireCode(t, canvas.ECONFLICT, f.s.CreateVersion(f.ctx, v))
		list, err := f.s.ListVersions(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.Len(t, list, 1, "the failed version left nothing behind")
	})
	run(t, newStore, "OriginVersion", func(t *testing.T, f *fixture) {
		c, d := f.Canvas("c", nil, "alice"), f.Canvas("d", nil, "alice")
		origin, elsewhere := f.Version(c, "one"), f.Version(d, "other")
		dup := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "copy", CreatedBy: "alice", OriginVersionID: &origin.ID}
		require.NoError(t, f.s.CreateVersion(f.ctx, dup))
		assert.Equal(t, &origin.ID, dup.OriginVersionID)
		for _, id := range []string{missingID, elsewhere.ID} {
			bad := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "copy", CreatedBy: "alice", OriginVersionID: &id}
			requireCode(t, canvas.ENOTFOUND, f.s.CreateVersion(f.ctx, bad))
		}
	})
	run(t, newStore, "IndexNeverReused", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		assert.Equal(t, []int{1, 2}, []int{v1.VersionIndex, v2.VersionIndex})
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			By: "bob"}))
		v3 := f.Version(c, "three")
		assert.Equal(t, 3, v3.VersionIndex)
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		_, err := f.s.GetVersion(f.ctx, f.ws.ID, missingID)
		requireCode(t, canvas.ENOTFOUND, err)
		other := f.Workspace("other")
		_, err = f.s.GetVersion(f.ctx, other.ID, v.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ListHistoryOrder", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			By: "bob"}))
		other := f.Version(f.Canvas("d", nil, "alice"), "elsewhere")
		list, err := f.s.ListVersions(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{v1.ID, v3.ID}, ids(list, versionID))
		assert.NotContains(t, ids(list, versionID), other.ID)
		for _, v := range list {
			assert.Len(t, v.Messages, 1, "each version has its own messages")
			assert.NotNil(t, v.Content)
		}
		assert.Equal(t, "three", *list[1].Content)
	})
	run(t, newStore, "ListMessagesOrderedByIndex", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Messages: []canvas.Message{
				{Role: canvas.RoleUser, Content: "third", Index: 2},
				{Role: canvas.RoleSystem, Content: "first", Index: 0},
				{Role: canvas.RoleAssistant, Content: "second", Index: 1},
			}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		list, err := f.s.ListVersions(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		require.Len(t, list, 1)
		var contents []string
		for _, m := range list[0].Messages {
			contents = append(contents, m.Content)
		}
		assert.Equal(t, []string{"first", "second", "third"}, contents)
		assert.Equal(t, "first", list[0].Message.Content)
	})
	run(t, newStore, "ListCanvasNotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.ListVersions(f.ctx, f.ws.ID, missingID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "DeleteIsSoft", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			By: "bob"}))
		_, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetMessage(f.ctx, f.ws.ID, v.Messages[0].ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.ListMessages(f.ctx, f.ws.ID, v.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID,
			ID: v.ID, By: "bob"}))
	})
	run(t, newStore, "DeleteNotFound", func(t *testing.T, f *fixture) {
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID,
			ID: missingID, By: "bob"}))
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		other := f.Workspace("other")
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: other.ID,
			ID: v.ID, By: "bob"}))
	})
	run(t, newStore, "DeletePublishedConflict", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Env(c, "staging")
		f.Publish(v1, "staging")
		requireCode(t, canvas.ECONFLICT, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID,
			ID: v1.ID, By: "bob"}))
		f.Publish(v2, "staging")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v1.ID,
			By: "bob"}), "a replaced publication does not block")
	})
}
