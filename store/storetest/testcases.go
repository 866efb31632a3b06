package storetest

import (
	"encoding/json"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaseOf creates a test case of c titled title.
func (f *fixture) TestCaseOf(c *canvas.Canvas, title string) *testcase.TestCase {
	f.t.Helper()
	tc := &testcase.TestCase{WorkspaceID: c.WorkspaceID, PromptID: c.ID, Title: title, CreatedBy: "alice", UpdatedBy: "alice"}
	require.NoError(f.t, f.s.CreateTestCase(f.ctx, tc))
	return tc
}

// TagOf creates a test case tag of c named name.
func (f *fixture) TagOf(c *canvas.Canvas, name string) *testcase.Tag {
	f.t.Helper()
	tag := &testcase.Tag{WorkspaceID: c.WorkspaceID, PromptID: c.ID, Name: name, Color: "#123456"}
	require.NoError(f.t, f.s.CreateTag(f.ctx, tag))
	return tag
}

func testCaseID(tc *testcase.TestCase) string { return tc.ID }
func tagID(t *testcase.Tag) string            { return t.ID }

func testTestCases(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetRoundTrip", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		want := "4"
		app := "11111111-1111-4111-8111-111111111111"
		tc := &testcase.TestCase{
			WorkspaceID: f.ws.ID, PromptID: c.ID, Title: "sum", CreatedBy: "alice", UpdatedBy: "alice",
			Messages:             []testcase.Message{{Role: "user", Content: "2+2?"}},
			Variables:            map[string]any{"x": "2"},
			VariablesRichContent: map[string]any{"doc": map[string]any{"type": "text"}},
			Files:                []testcase.File{{Index: 0, Name: "a.txt", MimeType: "text/plain", VaultURL: "vault://x", VariableName: "doc"}},
			ExpectedOutput:       &want,
			Evaluator:            &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: "^4$"},
			Answers:              map[string]testcase.AnswerSet{"q": {Good: []json.RawMessage{json.RawMessage(`"4"`)}, Bad: []json.RawMessage{}, Evals: []json.RawMessage{}}},
			PromptApplicationID:  &app,
			Metadata:             &testcase.Metadata{Source: "manual"},
		}
		require.NoError(t, f.s.CreateTestCase(f.ctx, tc))
		require.NotEmpty(t, tc.ID)
		got, err := f.s.GetTestCase(f.ctx, f.ws.ID, tc.ID)
		require.NoError(t, err)
		assert.Equal(t, tc.Messages, got.Messages)
		assert.Equal(t, tc.Variables, got.Variables)
		assert.Equal(t, tc.VariablesRichContent, got.VariablesRichContent)
		assert.Equal(t, tc.Files, got.Files)
		assert.Equal(t, want, *got.ExpectedOutput)
		assert.Equal(t, tc.Evaluator, got.Evaluator)
		assert.Equal(t, tc.Answers, got.Answers)
		assert.Equal(t, app, *got.PromptApplicationID)
		assert.Equal(t, "manual", got.Metadata.Source)
		assert.Equal(t, tc.CreatedAt, got.CreatedAt)
		assert.Empty(t, got.Tags)
		assert.NotNil(t, got.Tags)
	})
	run(t, newStore, "NullFieldsStayNull", func(t *testing.T, f *fixture) {
		tc := f.TestCaseOf(f.Canvas("c", nil, "alice"), "t")
		got, err := f.s.GetTestCase(f.ctx, f.ws.ID, tc.ID)
		require.NoError(t, err)
		assert.Nil(t, got.Messages)
		assert.Nil(t, got.Variables)
		assert.Nil(t, got.Files)
		assert.Nil(t, got.ExpectedOutput)
		assert.Nil(t, got.Evaluator)
		assert.Nil(t, got.Metadata)
	})
	run(t, newStore, "CreateInDeletedCanvasNotFound", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		require.NoError(t, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			By: "alice"}))
		err := f.s.CreateTestCase(f.ctx, &testcase.TestCase{WorkspaceID: f.ws.ID, PromptID: c.ID})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		tc := f.TestCaseOf(f.Canvas("c", nil, "alice"), "t")
		other := f.Workspace("other")
		_, err := f.s.GetTestCase(f.ctx, other.ID, tc.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteTestCase(f.ctx, other.ID, tc.ID))
	})
	run(t, newStore, "UpdatePartialAndNull", func(t *testing.T, f *fixture) {
		tc := f.TestCaseOf(f.Canvas("c", nil, "alice"), "t")
		want := "out"
		wantPtr := &want
		title := "renamed"
		got, err := f.s.UpdateTestCase(f.ctx, testcase.UpdateTestCaseParams{WorkspaceID: f.ws.ID, ID: tc.ID,
			Update: testcase.Update{Title: &title, ExpectedOutput: &wantPtr}, By: "bob"})
		require.NoError(t, err)
		assert.Equal(t, "renamed", got.Title)
		assert.Equal(t, "out", *got.ExpectedOutput)
		assert.Equal(t, "bob", got.UpdatedBy)
		var none *string
		got, err = f.s.UpdateTestCase(f.ctx, testcase.UpdateTestCaseParams{WorkspaceID: f.ws.ID, ID: tc.ID,
			Update: testcase.Update{ExpectedOutput: &none}, By: "bob"})
		require.NoError(t, err)
		assert.Nil(t, got.ExpectedOutput)
		assert.Equal(t, "renamed", got.Title)
	})
	run(t, newStore, "SoftDelete", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		a, b := f.TestCaseOf(c, "a"), f.TestCaseOf(c, "b")
		require.NoError(t, f.s.DeleteTestCase(f.ctx, f.ws.ID, a.ID))
		_, err := f.s.GetTestCase(f.ctx, f.ws.ID, a.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteTestCase(f.ctx, f.ws.ID, a.ID))
		list, err := f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID, PromptID: c.ID})
		require.NoError(t, err)
		assert.Equal(t, []string{b.ID}, ids(list, testCaseID))
	})
	run(t, newStore, "ListFilters", func(t *testing.T, f *fixture) {
		c1, c2 := f.Canvas("c1", nil, "alice"), f.Canvas("c2", nil, "alice")
		a, b, x := f.TestCaseOf(c1, "a"), f.TestCaseOf(c1, "b"), f.TestCaseOf(c2, "x")
		tag := f.TagOf(c1, "smoke")
		_, err := f.s.AddTags(f.ctx, f.ws.ID, []string{b.ID}, []string{tag.ID})
		require.NoError(t, err)
		list, err := f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID, PromptID: c1.ID})
		require.NoError(t, err)
		assert.Equal(t, []string{a.ID, b.ID}, ids(list, testCaseID))
		list, err = f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID, IDs: []string{x.ID, a.ID}})
		require.NoError(t, err)
		assert.Equal(t, []string{a.ID, x.ID}, ids(list, testCaseID))
		list, err = f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID, TagIDs: []string{tag.ID}})
		require.NoError(t, err)
		assert.Equal(t, []string{b.ID}, ids(list, testCaseID))
		list, err = f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID})
		require.NoError(t, err)
		assert.Empty(t, list)
	})
	run(t, newStore, "DeletedCanvasHidesTestCases", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		tc := f.TestCaseOf(c, "a")
		require.NoError(t, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			By: "alice"}))
		_, err := f.s.GetTestCase(f.ctx, f.ws.ID, tc.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	testTags(t, newStore)
}

func testTags(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "TagsOrderedByName", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		z, a := f.TagOf(c, "zeta"), f.TagOf(c, "alpha")
		f.TagOf(f.Canvas("other", nil, "alice"), "beta")
		list, err := f.s.ListTags(f.ctx, f.ws.ID, c.ID, nil)
		require.NoError(t, err)
		assert.Equal(t, []string{a.ID, z.ID}, ids(list, tagID))
		assert.Nil(t, list[0].AgentID)
		tc := f.TestCaseOf(c, "t")
		_, err = f.s.AddTags(f.ctx, f.ws.ID, []string{tc.ID}, []string{z.ID, a.ID})
		require.NoError(t, err)
		got, err := f.s.GetTestCase(f.ctx, f.ws.ID, tc.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{a.ID, z.ID}, ids(got.Tags, tagID))
	})
	run(t, newStore, "AddTagsIdempotent", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		a, b := f.TestCaseOf(c, "a"), f.TestCaseOf(c, "b")
		t1, t2 := f.TagOf(c, "one"), f.TagOf(c, "two")
		res, err := f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID}, []string{t1.ID})
		require.NoError(t, err)
		assert.Equal(t, testcase.BulkAddResult{Added: 1}, res)
		res, err = f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID, b.ID}, []string{t1.ID, t2.ID})
		require.NoError(t, err)
		assert.Equal(t, testcase.BulkAddResult{Added: 3, Skipped: 1}, res)
		res, err = f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID, b.ID}, []string{t1.ID, t2.ID})
		require.NoError(t, err)
		assert.Equal(t, testcase.BulkAddResult{Skipped: 4}, res)
		rm, err := f.s.RemoveTags(f.ctx, f.ws.ID, []string{a.ID}, []string{t1.ID, t2.ID})
		require.NoError(t, err)
		assert.Equal(t, testcase.BulkRemoveResult{Removed: 2}, rm)
		rm, err = f.s.RemoveTags(f.ctx, f.ws.ID, []string{a.ID}, []string{t1.ID})
		require.NoError(t, err)
		assert.Equal(t, testcase.BulkRemoveResult{Skipped: 1}, rm)
	})
	run(t, newStore, "AddTagsUnknownWritesNothing", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		a := f.TestCaseOf(c, "a")
		tag := f.TagOf(c, "one")
		_, err := f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID, "00000000-0000-4000-8000-000000000000"}, []string{tag.ID})
		requireCode(t, canvas.ENOTFOUND, err)
		got, err := f.s.GetTestCase(f.ctx, f.ws.ID, a.ID)
		require.NoError(t, err)
		assert.Empty(t, got.Tags)
	})
	run(t, newStore, "AddTagsAcrossCanvasesInvalid", func(t *testing.T, f *fixture) {
		a := f.TestCaseOf(f.Canvas("c1", nil, "alice"), "a")
		tag := f.TagOf(f.Canvas("c2", nil, "alice"), "one")
		_, err := f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID}, []string{tag.ID})
		requireCode(t, canvas.EINVALID, err)
	})
	run(t, newStore, "DeleteTagRemovesAssignments", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		a := f.TestCaseOf(c, "a")
		tag := f.TagOf(c, "one")
		_, err := f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID}, []string{tag.ID})
		require.NoError(t, err)
		require.NoError(t, f.s.DeleteTag(f.ctx, f.ws.ID, tag.ID))
		_, err = f.s.GetTag(f.ctx, f.ws.ID, tag.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteTag(f.ctx, f.ws.ID, tag.ID))
		got, err := f.s.GetTestCase(f.ctx, f.ws.ID, a.ID)
		require.NoError(t, err)
		assert.Empty(t, got.Tags)
		list, err := f.s.ListTestCases(f.ctx, testcase.Filter{WorkspaceID: f.ws.ID, TagIDs: []string{tag.ID}})
		require.NoError(t, err)
		assert.Empty(t, list)
	})
	run(t, newStore, "UpdateTagMove", func(t *testing.T, f *fixture) {
		c1, c2 := f.Canvas("c1", nil, "alice"), f.Canvas("c2", nil, "alice")
		tag := f.TagOf(c1, "one")
		a := f.TestCaseOf(c1, "a")
		name := "renamed"
		got, err := f.s.UpdateTag(f.ctx, f.ws.ID, tag.ID, testcase.TagUpdate{Name: &name})
		require.NoError(t, err)
		assert.Equal(t, "renamed", got.Name)
		assert.Equal(t, "#123456", got.Color)
		_, err = f.s.AddTags(f.ctx, f.ws.ID, []string{a.ID}, []string{tag.ID})
		require.NoError(t, err)
		_, err = f.s.UpdateTag(f.ctx, f.ws.ID, tag.ID, testcase.TagUpdate{PromptID: &c2.ID})
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.RemoveTags(f.ctx, f.ws.ID, []string{a.ID}, []string{tag.ID})
		require.NoError(t, err)
		got, err = f.s.UpdateTag(f.ctx, f.ws.ID, tag.ID, testcase.TagUpdate{PromptID: &c2.ID})
		require.NoError(t, err)
		assert.Equal(t, c2.ID, got.PromptID)
	})
}
