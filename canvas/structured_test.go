package canvas_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

func TestCompileSchema(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s, err := canvas.CompileSchema(canvas.StructuredOutputSchemaPath, json.RawMessage(`{"type": "object", "required": ["a"]}`))
		require.NoError(t, err)
		assert.NoError(t, s.Validate(map[string]any{"a": 1}))
		assert.Error(t, s.Validate(map[string]any{}))
	})
	t.Run("Invalid", func(t *testing.T) {
		_, err := canvas.CompileSchema("/json/x", json.RawMessage(`{"type": 5}`))
		assertCode(t, canvas.EINVALID, err)
		for _, d := range canvas.ErrorDetails(err) {
			assert.Regexp(t, "^/json/x", d.Path)
		}
		_, err = canvas.CompileSchema("/json/x", json.RawMessage(`[]`))
		assertInvalid(t, err, "/json/x")
	})
}

// TestService_StructuredOutputOnSave checks that a version never holds an
// invalid structured output schema: it is rejected on create and on update.
func TestService_StructuredOutputOnSave(t *testing.T) {
	const schemaPath = "/json/configuration/structuredOutput/schema/type"
	f := newFixture(t)
	ctx := f.Key(canvas.RoleEditor)
	c := f.MustCanvas(ctx, "c", &f.Project.ID)
	invalid := &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(`{"type": 5}`)}

	t.Run("CreateInvalid", func(t *testing.T) {
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Configuration: &canvas.Configuration{StructuredOutput: invalid}})
		assertCode(t, canvas.EINVALID, err)
		require.NotEmpty(t, canvas.ErrorDetails(err))
		assert.Regexp(t, "^/json/configuration/structuredOutput/schema", canvas.ErrorDetails(err)[0].Path)
	})
	t.Run("CreateDisabled", func(t *testing.T) {
		f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Configuration: &canvas.Configuration{StructuredOutput: &canvas.StructuredOutput{Schema: invalid.Schema}}})
	})
	t.Run("UpdateInvalid", func(t *testing.T) {
		v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Configuration: &canvas.Configuration{StructuredOutput: &canvas.StructuredOutput{Schema: invalid.Schema}}})
		_, err := f.Service.UpdateVersion(ctx, v.ID, canvas.VersionUpdate{
			ConfigurationPatch: json.RawMessage(`{"structuredOutput": {"enabled": true}}`)})
		assertSchemaInvalid(t, err, schemaPath)

		_, err = f.Service.UpdateVersion(ctx, v.ID, canvas.VersionUpdate{
			ConfigurationPatch: json.RawMessage(`{"structuredOutput": {"schema": {"type": "object"}}}`)})
		require.NoError(t, err)
		_, err = f.Service.UpdateVersion(ctx, v.ID, canvas.VersionUpdate{
			ConfigurationPatch: json.RawMessage(`{"structuredOutput": {"enabled": true}}`)})
		require.NoError(t, err, "a valid schema may be enabled")
		_, err = f.Service.UpdateVersion(ctx, v.ID, canvas.VersionUpdate{
			ConfigurationPatch: json.RawMessage(`{"structuredOutput": {"schema": {"type": 5}}}`)})
		assertSchemaInvalid(t, err, schemaPath)
		got, err := f.Service.GetVersion(ctx, v.ID)
		require.NoError(t, err)
		assert.JSONEq(t, `{"type": "object"}`, string(got.Configuration.StructuredOutput.Schema), "nothing was saved")
	})
}

// assertSchemaInvalid checks that err is VALIDATION and that every detail
// is at path.
func assertSchemaInvalid(t *testing.T, err error, path string) {
	t.Helper()
	assertCode(t, canvas.EINVALID, err)
	require.NotEmpty(t, canvas.ErrorDetails(err))
	for _, d := range canvas.ErrorDetails(err) {
		assert.Equal(t, path, d.Path)
	}
}
