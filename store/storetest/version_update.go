package storetest

import (
	"encoding/json"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testVersionUpdates(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "Fields", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		vars := []canvas.Variable{{Name: "doc", Type: canvas.VariableFile, ProcessingOptions: canvas.ProcessingOptions{AllowMultimodal: true}}}
		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Title: ptr("renamed"), Draft: ptr(true), Variables: &vars}, By: "bob"})
		require.NoError(t, err)
		assert.Equal(t, "renamed", got.Title)
		assert.True(t, got.Draft)
		assert.Equal(t, vars, got.Variables)
		assert.Equal(t, "bob", got.UpdatedBy)
		assert.Equal(t, "alice", got.CreatedBy)
		require.NotNil(t, got.Content)
		assert.Equal(t, "one", *got.Content, "fields not given stay")
		again, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.Equal(t, got, again)
	})
	run(t, newStore, "ConfigurationMergePatch", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		temp, maxTokens := 0.9, 100
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Configuration: canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp, MaxTokens: &maxTokens,
				Functions: []canvas.Function{{Name: "lookup"}},
				Extra:     map[string]json.RawMessage{"vendorOption": json.RawMessage(`{"x":1}`)}}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))

		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{ConfigurationPatch: json.RawMessage(`{"temperature":0.2}`)}, By: "bob"})
		require.NoError(t, err)
		require.NotNil(t, got.Configuration.Temperature)
		assert.InDelta(t, 0.2, *got.Configuration.Temperature, 1e-9)
		assert.Equal(t, "echo", got.Configuration.Model)
		assert.Equal(t, "chat", got.Configuration.Type)
		assert.Equal(t, &maxTokens, got.Configuration.MaxTokens)
		assert.Equal(t, []canvas.Function{{Name: "lookup"}}, got.Configuration.Functions)
		require.Contains(t, got.Configuration.Extra, "vendorOption")
		assert.JSONEq(t, `{"x":1}`, string(got.Configuration.Extra["vendorOption"]))

		got, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{ConfigurationPatch: json.RawMessage(`{"maxTokens":null,"tools":{"a":1}}`)}, By: "bob"})
		require.NoError(t, err)
		assert.Nil(t, got.Configuration.MaxTokens, "null removes a key")
		assert.Equal(t, []canvas.Function{{Name: "lookup"}}, got.Configuration.Functions)
		assert.Contains(t, got.Configuration.Extra, "vendorOption")
		assert.JSONEq(t, `{"a":1}`, string(got.Configuration.Extra["tools"]))
		assert.InDelta(t, 0.2, *got.Configuration.Temperature, 1e-9)
	})
	run(t, newStore, "ConfigurationPatchOfWrongTypeInvalid", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{ConfigurationPatch: json.RawMessage(`{"temperature":"hot"}`)}, By: "bob"})
		requireCode(t, canvas.EINVALID, err)
	})
	run(t, newStore, "ContentWritesPromptMessage", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		md := "# one"
		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Content: ptr("uno"), MarkdownContent: &md}, By: "bob"})
		require.NoError(t, err)
		require.Len(t, got.Messages, 1)
		assert.Equal(t, v.Messages[0].ID, got.Messages[0].ID, "the prompt message is updated in place")
		assert.Equal(t, "uno", *got.Content)
		assert.Equal(t, &md, got.MarkdownContent)
		assert.Equal(t, "bob", got.Messages[0].UpdatedBy)
	})
	run(t, newStore, "ContentCreatesMissingPromptMessage", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Messages: []canvas.Message{{Role: canvas.RoleUser, Content: "q", Index: 1}}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Content: ptr("prompt")}, By: "bob"})
		require.NoError(t, err)
		require.Len(t, got.Messages, 2)
		assert.Equal(t, canvas.RoleSystem, got.Messages[0].Role)
		assert.Equal(t, 0, got.Messages[0].Index)
		assert.Equal(t, "prompt", *got.Content)
		assert.Equal(t, "q", got.Messages[1].Content)
	})
	run(t, newStore, "MessagesReplaceAll", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "t", CreatedBy: "alice",
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "sys"}, {Role: canvas.RoleUser, Content: "old", Index: 1}}}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		keep, drop := v.Messages[0].ID, v.Messages[1].ID
		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Messages: &[]canvas.MessageInput{
				{ID: keep, Role: canvas.RoleSystem, Content: "sys2"},
				{Role: canvas.RoleAssistant, Content: "new", Index: 1},
			}}, By: "bob"})
		require.NoError(t, err)
		require.Len(t, got.Messages, 2)
		assert.Equal(t, keep, got.Messages[0].ID)
		assert.Equal(t, "sys2", *got.Content)
		assert.Equal(t, "new", got.Messages[1].Content)
		assert.NotEqual(t, drop, got.Messages[1].ID)
		_, err = f.s.GetMessage(f.ctx, f.ws.ID, drop)
		requireCode(t, canvas.ENOTFOUND, err)

		got, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Messages: &[]canvas.MessageInput{}}, By: "bob"})
		require.NoError(t, err)
		assert.Empty(t, got.Messages)
		assert.Nil(t, got.Content)
	})
	run(t, newStore, "MessagesWithForeignIDConflict", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			Update: canvas.VersionUpdate{Messages: &[]canvas.MessageInput{
				{ID: v1.Messages[0].ID, Role: canvas.RoleSystem, Content: "stolen"}}}, By: "bob"})
		requireCode(t, canvas.ECONFLICT, err)
		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v1.ID)
		require.NoError(t, err)
		assert.Equal(t, "one", *got.Content)
	})
	run(t, newStore, "PromotedIsProduction", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		got, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v1.ID,
			Update: canvas.VersionUpdate{Promoted: ptr(true)}, By: "bob"})
		require.NoError(t, err)
		assert.True(t, got.Promoted)
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.True(t, prod.IsSystem)
		assert.Equal(t, &v1.ID, prod.ActiveVersionID, "promoting publishes to production")
		hist := f.History(prod)
		require.Len(t, hist, 1)
		assert.Equal(t, "bob", hist[0].PublishedBy)

		f.Publish(v2, env.Production)
		first, err := f.s.GetVersion(f.ctx, f.ws.ID, v1.ID)
		require.NoError(t, err)
		assert.False(t, first.Promoted, "publishing to production moves the promotion")
		second, err := f.s.GetVersion(f.ctx, f.ws.ID, v2.ID)
		require.NoError(t, err)
		assert.True(t, second.Promoted)

		got, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v1.ID,
			Update: canvas.VersionUpdate{Promoted: ptr(false)}, By: "bob"})
		require.NoError(t, err)
		assert.False(t, got.Promoted)
		assert.Len(t, f.History(prod), 2, "withdrawing a version that is not promoted changes nothing")
		prod, err = f.s.GetEnvironment(f.ctx, f.ws.ID, prod.ID)
		require.NoError(t, err)
		assert.Equal(t, &v2.ID, prod.ActiveVersionID)

		got, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			Update: canvas.VersionUpdate{Promoted: ptr(false)}, By: "bob"})
		require.NoError(t, err)
		assert.False(t, got.Promoted)
		prod, err = f.s.GetEnvironment(f.ctx, f.ws.ID, prod.ID)
		require.NoError(t, err)
		assert.Nil(t, prod.ActiveVersionID, "withdrawing the promoted version leaves production empty")
		hist = f.History(prod)
		require.Len(t, hist, 2)
		assert.False(t, hist[0].IsActive)
		assert.NotNil(t, hist[0].UnpublishedAt)
	})
	run(t, newStore, "PromoteTwiceIsNoop", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		for range 2 {
			_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
				Update: canvas.VersionUpdate{Promoted: ptr(true)}, By: "bob"})
			require.NoError(t, err)
		}
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.Len(t, f.History(prod), 1)
	})
	run(t, newStore, "CustomEnvironmentDoesNotPromote", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		f.Env(c, "staging")
		pub := f.Publish(v, "staging")
		require.NotNil(t, pub.Promoted)
		assert.False(t, *pub.Promoted)
		got, err := f.s.GetVersion(f.ctx, f.ws.ID, v.ID)
		require.NoError(t, err)
		assert.False(t, got.Promoted)
	})
	run(t, newStore, "NotFound", func(t *testing.T, f *fixture) {
		_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: missingID,
			Update: canvas.VersionUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		other := f.Workspace("other")
		_, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: other.ID, ID: v.ID,
			Update: canvas.VersionUpdate{Title: ptr("x")}, By: "bob"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
}
