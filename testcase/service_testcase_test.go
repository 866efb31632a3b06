package testcase_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// listFixture is a database with a canvas of two versions and one test case
// that has one generation per version.
type listFixture struct {
	ctx      context.Context
	svc      *testcase.Service
	canvasID string
	v1, v2   string
	gen1     string
	gen2     string
}

func newListFixture(t *testing.T) *listFixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	c := &canvas.Canvas{Title: "c", WorkspaceID: ws.ID, InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2,
		CustomTags: []string{}, CreatedBy: "ada", UpdatedBy: "ada"}
	require.NoError(t, db.CreateCanvas(ctx, c))
	f := &listFixture{svc: testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db}), canvasID: c.ID}
	f.ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleViewer})
	var versions []string
	for range 2 {
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, CreatedBy: "ada", UpdatedBy: "ada",
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "hi"}}}
		require.NoError(t, db.CreateVersion(ctx, v))
		versions = append(versions, v.ID)
	}
	f.v1, f.v2 = versions[0], versions[1]
	tc := &testcase.TestCase{WorkspaceID: ws.ID, PromptID: c.ID, Title: "t", CreatedBy: "ada", UpdatedBy: "ada"}
	require.NoError(t, db.CreateTestCase(ctx, tc))
	var gens []*testcase.Generation
	var jobs []*queue.Job
	for _, v := range versions {
		gens = append(gens, &testcase.Generation{WorkspaceID: ws.ID, TestCaseID: tc.ID, PromptID: c.ID,
			PromptVersionID: v, ExecutionID: "exec-" + v})
		jobs = append(jobs, &queue.Job{WorkspaceID: ws.ID, Kind: testcase.JobKindGenerate})
	}
	require.NoError(t, db.CreateGenerations(ctx, gens, jobs))
	f.gen1, f.gen2 = gens[0].ID, gens[1].ID
	return f
}

// generationIDs returns the ids of the generations of the one test case
// listed.
func generationIDs(t *testing.T, list []*testcase.TestCase) []string {
	t.Helper()
	require.Len(t, list, 1)
	var out []string
	for _, g := range list[0].Generations {
		out = append(out, g.ID)
	}
	return out
}

func TestService_ListTestCases(t *testing.T) {
	f := newListFixture(t)
	t.Run("WithoutGenerations", func(t *testing.T) {
		list, err := f.svc.ListTestCases(f.ctx, testcase.ListParams{PromptID: f.canvasID, PromptVersionIDs: []string{f.v1}})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Nil(t, list[0].Generations, "generations only when asked for")
	})
	t.Run("IncludeGenerations", func(t *testing.T) {
		list, err := f.svc.ListTestCases(f.ctx, testcase.ListParams{PromptID: f.canvasID, IncludeGenerations: true})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{f.gen1, f.gen2}, generationIDs(t, list))
	})
	t.Run("PromptVersionIDs", func(t *testing.T) {
		list, err := f.svc.ListTestCases(f.ctx, testcase.ListParams{PromptID: f.canvasID, IncludeGenerations: true,
			PromptVersionIDs: []string{f.v2}})
		require.NoError(t, err)
		assert.Equal(t, []string{f.gen2}, generationIDs(t, list))
	})
	t.Run("PromptVersionIDsMatchingNothing", func(t *testing.T) {
		list, err := f.svc.ListTestCases(f.ctx, testcase.ListParams{PromptID: f.canvasID, IncludeGenerations: true,
			PromptVersionIDs: []string{"00000000-0000-4000-8000-000000000000"}})
		require.NoError(t, err)
		require.Len(t, list, 1, "the test case stays listed")
		assert.Equal(t, []*testcase.Generation{}, list[0].Generations)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		_, err := f.svc.ListTestCases(context.Background(), testcase.ListParams{PromptID: f.canvasID})
		assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err))
	})
}
