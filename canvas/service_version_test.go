package canvas_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestService_CreateVersion(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		v, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
		require.NoError(t, err)
		assert.NotEmpty(t, v.ID)
		assert.Equal(t, c.ID, v.PromptID)
		assert.Equal(t, "Version 1", v.Title)
		assert.Equal(t, 1, v.VersionIndex)
		assert.False(t, v.Draft, "draft defaults to false")
		assert.False(t, v.Promoted)
		assert.False(t, v.IsWorkflow)
		assert.Nil(t, v.OriginVersionID)
		assert.Nil(t, v.Content)
		assert.Nil(t, v.Message)
		assert.Empty(t, v.Messages)
		assert.Equal(t, []canvas.Variable{}, v.Variables)
		assert.Equal(t, canvas.PrincipalFrom(ctx).Actor(), v.CreatedBy)

		v2 := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Draft: true})
		assert.Equal(t, "Version 2", v2.Title)
		assert.Equal(t, 2, v2.VersionIndex)
		assert.True(t, v2.Draft)
	})
	t.Run("WithMessage", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		temp := 0.7
		v := f.MustVersion(ctx, canvas.CreateVersionParams{
			PromptID: c.ID, Title: "First",
			Configuration: &canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp},
			Variables:     []canvas.Variable{{Name: "name"}, {Name: "doc", Type: canvas.VariableFile, Required: true}},
			Message:       &canvas.MessageInput{Content: "Hello {{name}}", MarkdownContent: ptr("**Hello**"), Index: 3},
		})
		assert.Equal(t, "First", v.Title)
		assert.Equal(t, "echo", v.Configuration.Model)
		require.NotNil(t, v.Configuration.Temperature)
		assert.Equal(t, 0.7, *v.Configuration.Temperature)
		require.Len(t, v.Variables, 2)
		assert.Equal(t, canvas.VariableText, v.Variables[0].Type, "type defaults to text")
		assert.Equal(t, canvas.VariableFile, v.Variables[1].Type)
		require.Len(t, v.Messages, 1)
		m := v.Messages[0]
		assert.Equal(t, canvas.RoleSystem, m.Role, "role defaults to system")
		assert.Equal(t, 0, m.Index, "the single message is stored at index 0")
		assert.Equal(t, v.ID, m.PromptVersionID)
		require.NotNil(t, v.Message)
		assert.Equal(t, m.ID, v.Message.ID)
		require.NotNil(t, v.Content)
		assert.Equal(t, "Hello {{name}}", *v.Content, "the prompt is the system message at index 0")
		require.NotNil(t, v.MarkdownContent)
		assert.Equal(t, "**Hello**", *v.MarkdownContent)
	})
	t.Run("Duplicate", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		origin := f.MustVersion(ctx, canvas.CreateVersionParams{
			PromptID: c.ID, Title: "Original",
			Configuration: &canvas.Configuration{Model: "echo"},
			Variables:     []canvas.Variable{{Name: "x", Type: canvas.VariableNumber}},
			Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Say {{x}}"},
		})

		dup := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, OriginVersionID: origin.ID})
		require.NotNil(t, dup.OriginVersionID)
		assert.Equal(t, origin.ID, *dup.OriginVersionID)
		assert.NotEqual(t, origin.ID, dup.ID)
		assert.Equal(t, "Original (copy)", dup.Title)
		assert.Equal(t, origin.Configuration.Model, dup.Configuration.Model)
		assert.Equal(t, origin.Variables, dup.Variables)
		require.Len(t, dup.Messages, 1)
		assert.NotEqual(t, origin.Messages[0].ID, dup.Messages[0].ID, "messages are copied, not shared")
		assert.Equal(t, dup.ID, dup.Messages[0].PromptVersionID)
		require.NotNil(t, dup.Content)
		assert.Equal(t, "Say {{x}}", *dup.Content)

		own := f.MustVersion(ctx, canvas.CreateVersionParams{
			PromptID: c.ID, OriginVersionID: origin.ID, Title: "Mine",
			Configuration: &canvas.Configuration{Model: "other"},
			Message:       &canvas.MessageInput{Content: "Mine"},
		})
		assert.Equal(t, "Mine", own.Title)
		assert.Equal(t, "other", own.Configuration.Model, "the caller's configuration wins")
		assert.Equal(t, origin.Variables, own.Variables, "what the caller leaves out is copied")
		require.NotNil(t, own.Content)
		assert.Equal(t, "Mine", *own.Content)
	})
	t.Run("DuplicateOfOtherCanvas", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c1 := f.MustCanvas(ctx, "c1", &f.Project.ID)
		c2 := f.MustCanvas(ctx, "c2", &f.Project.ID)
		origin := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c1.ID})
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c2.ID, OriginVersionID: origin.ID})
		assertInvalid(t, err, "/json/originVersionId")
		_, err = f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c2.ID, OriginVersionID: uuid.NewString()})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Workflow", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		spec := json.RawMessage(`{"nodes":[]}`)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, IsWorkflow: true, WorkflowSpec: spec})
		assertInvalid(t, err, "/json/workflowSpec") // a service without a workflow compiler refuses specs
	})
	t.Run("Validation", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		tests := []struct {
			name   string
			params canvas.CreateVersionParams
			paths  []string
		}{
			{"PromptID", canvas.CreateVersionParams{PromptID: "x"}, []string{"/json/promptId"}},
			{"TitleTooLong", canvas.CreateVersionParams{PromptID: c.ID, Title: strings.Repeat("界", 257)}, []string{"/json/title"}},
			{"VariableName", canvas.CreateVersionParams{PromptID: c.ID, Variables: []canvas.Variable{{Name: ""}}}, []string{"/json/variables/0/name"}},
			{"VariableDuplicate", canvas.CreateVersionParams{PromptID: c.ID, Variables: []canvas.Variable{{Name: "a"}, {Name: "a"}}}, []string{"/json/variables/1/name"}},
			{"VariableType", canvas.CreateVersionParams{PromptID: c.ID, Variables: []canvas.Variable{{Name: "a", Type: "image"}}}, []string{"/json/variables/0/type"}},
			{"MessageRole", canvas.CreateVersionParams{PromptID: c.ID, Message: &canvas.MessageInput{Role: "robot"}}, []string{"/json/message/role"}},
			{"OriginVersionID", canvas.CreateVersionParams{PromptID: c.ID, OriginVersionID: "x"}, []string{"/json/originVersionId"}},
			{"WorkflowWithoutSpec", canvas.CreateVersionParams{PromptID: c.ID, IsWorkflow: true, WorkflowSpec: json.RawMessage("null")}, []string{"/json/workflowSpec"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := f.Service.CreateVersion(ctx, tt.params)
				assertInvalid(t, err, tt.paths...)
			})
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.Service.CreateVersion(f.Key(canvas.RoleEditor), canvas.CreateVersionParams{PromptID: uuid.NewString()})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		f := newFixture(t)
		other := f.MustProject("other")
		c := f.MustCanvas(f.Key(canvas.RoleEditor), "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(f.Key(canvas.RoleViewer), canvas.CreateVersionParams{PromptID: c.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.CreateVersion(f.Key(canvas.RoleEditor, other.ID), canvas.CreateVersionParams{PromptID: c.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_ListVersions(t *testing.T) {
	f := newFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	c := f.MustCanvas(ctx, "c", &f.Project.ID)
	v1 := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
	v2 := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
	v3 := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
	require.NoError(t, f.Service.DeleteVersion(ctx, v2.ID))

	t.Run("OK", func(t *testing.T) {
		list, err := f.Service.ListVersions(f.Key(canvas.RoleViewer), canvas.ListVersionsParams{PromptID: c.ID})
		require.NoError(t, err)
		require.Len(t, list, 2, "a deleted version vanishes")
		assert.Equal(t, v1.ID, list[0].ID)
		assert.Equal(t, v3.ID, list[1].ID)
		assert.Equal(t, 3, list[1].VersionIndex, "positions are never reused")
	})
	t.Run("NextTitle", func(t *testing.T) {
		v4 := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})
		assert.Equal(t, "Version 4", v4.Title)
	})
	t.Run("NotFound", func(t *testing.T) {
		_, err := f.Service.ListVersions(ctx, canvas.ListVersionsParams{PromptID: uuid.NewString()})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, err := f.Service.ListVersions(f.Key(canvas.RoleViewer, uuid.NewString()), canvas.ListVersionsParams{PromptID: c.ID})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_UpdateVersion(t *testing.T) {
	setup := func(t *testing.T) (*fixture, *canvas.Version) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		c := f.MustCanvas(ctx, "c", &f.Project.ID)
		temp := 0.5
		v := f.MustVersion(ctx, canvas.CreateVersionParams{
			PromptID:      c.ID,
			Configuration: &canvas.Configuration{Model: "echo", Temperature: &temp, Functions: []canvas.Function{{Name: "f"}}},
			Message:       &canvas.MessageInput{Content: "old"},
		})
		return f, v
	}
	t.Run("MergePatch", func(t *testing.T) {
		f, v := setup(t)
		got, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{
			ConfigurationPatch: json.RawMessage(`{"temperature":0.2}`),
		})
		require.NoError(t, err)
		require.NotNil(t, got.Configuration.Temperature)
		assert.Equal(t, 0.2, *got.Configuration.Temperature)
		assert.Equal(t, "echo", got.Configuration.Model, "other keys are kept")
		assert.Equal(t, []canvas.Function{{Name: "f"}}, got.Configuration.Functions)
	})
	t.Run("Fields", func(t *testing.T) {
		f, v := setup(t)
		got, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{
			Title: ptr("Renamed"), Draft: ptr(true), Content: ptr("new"),
			Variables: &[]canvas.Variable{{Name: "n"}},
		})
		require.NoError(t, err)
		assert.Equal(t, "Renamed", got.Title)
		assert.True(t, got.Draft)
		require.NotNil(t, got.Content)
		assert.Equal(t, "new", *got.Content)
		assert.Equal(t, []canvas.Variable{{Name: "n", Type: canvas.VariableText}}, got.Variables)
	})
	t.Run("Messages", func(t *testing.T) {
		f, v := setup(t)
		got, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{
			Messages: &[]canvas.MessageInput{{Role: canvas.RoleUser, Content: "u", Index: 1}, {Content: "s", Index: 0}},
		})
		require.NoError(t, err)
		require.Len(t, got.Messages, 2)
		assert.Equal(t, canvas.RoleSystem, got.Messages[0].Role, "messages ordered by index; role defaults to system")
		assert.Equal(t, "s", got.Messages[0].Content)
		assert.Equal(t, "u", got.Messages[1].Content)
		require.NotNil(t, got.Content)
		assert.Equal(t, "s", *got.Content)
	})
	t.Run("Promoted", func(t *testing.T) {
		f, v := setup(t)
		_, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{Promoted: ptr(true)})
		assertInvalid(t, err, "/json/promoted") // without a promoter, a promotion is refused
		f.Service = canvas.NewService(canvas.Options{Store: f.Store,
			Promoter: env.NewService(env.Options{Store: f.Store, Canvases: f.Store})})
		got, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{Promoted: ptr(true)})
		require.NoError(t, err)
		assert.True(t, got.Promoted)
		list, err := f.Service.ListCanvases(f.Key(canvas.RoleViewer), canvas.ListCanvasesParams{IncludePromotedVersion: true})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NotNil(t, list[0].Versions)
		require.NotNil(t, list[0].Versions.Promoted)
		assert.Equal(t, v.ID, list[0].Versions.Promoted.ID)
		assertCode(t, canvas.ECONFLICT, f.Service.DeleteVersion(f.Key(canvas.RoleEditor), v.ID))
	})
	t.Run("Validation", func(t *testing.T) {
		f, v := setup(t)
		_, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), v.ID, canvas.VersionUpdate{
			Title:              ptr(strings.Repeat("x", 257)),
			ConfigurationPatch: json.RawMessage(`[1]`),
			Variables:          &[]canvas.Variable{{Name: "a"}, {Name: "a", Type: "nope"}},
			Messages:           &[]canvas.MessageInput{{Role: "robot", Index: -1}},
		})
		assertInvalid(t, err, "/json/title", "/json/configuration", "/json/variables/1/name",
			"/json/variables/1/type", "/json/messages/0/role", "/json/messages/0/index")
	})
	t.Run("NotFound", func(t *testing.T) {
		f, _ := setup(t)
		_, err := f.Service.UpdateVersion(f.Key(canvas.RoleEditor), uuid.NewString(), canvas.VersionUpdate{Title: ptr("x")})
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		f, v := setup(t)
		_, err := f.Service.UpdateVersion(f.Key(canvas.RoleViewer), v.ID, canvas.VersionUpdate{Title: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
		_, err = f.Service.UpdateVersion(f.Key(canvas.RoleEditor, uuid.NewString()), v.ID, canvas.VersionUpdate{Title: ptr("x")})
		assertCode(t, canvas.EFORBIDDEN, err)
	})
}

func TestService_DeleteVersion(t *testing.T) {
	f := newFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	c := f.MustCanvas(ctx, "c", &f.Project.ID)
	v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID})

	t.Run("Forbidden", func(t *testing.T) {
		assertCode(t, canvas.EFORBIDDEN, f.Service.DeleteVersion(f.Key(canvas.RoleViewer), v.ID))
	})
	t.Run("OK", func(t *testing.T) {
		require.NoError(t, f.Service.DeleteVersion(ctx, v.ID))
		_, err := f.Service.GetVersion(ctx, v.ID)
		assertCode(t, canvas.ENOTFOUND, err)
	})
	t.Run("NotFound", func(t *testing.T) {
		assertCode(t, canvas.ENOTFOUND, f.Service.DeleteVersion(ctx, v.ID))
	})
}
