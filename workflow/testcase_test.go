package workflow_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// TestRun_TestCase runs test cases against a workflow version: each
// generation starts a workflow run (environment test-case) and records its
// output, graded; one whose run pauses for a review fails.
func TestRun_TestCase(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	testCases := testcase.NewService(testcase.Options{Store: h.db, Canvases: h.db, Generations: h.db})
	generations := testcase.NewGenerationService(testcase.GenerationOptions{TestCases: testCases, Store: h.db,
		Runner: h.completions(), Notify: h.worker.Notify, Cancel: h.worker.Cancel})
	h.worker.Handle(testcase.JobKindGenerate, generations.HandleJob)
	h.startWorker()
	versionID := h.version(draftSpec)

	want := "Short: hi"
	short, err := testCases.CreateTestCase(h.ctx, testcase.CreateParams{PromptID: h.canvasID, Title: "short",
		Variables: map[string]any{"topic": "hi"}, ExpectedOutput: &want})
	require.NoError(t, err)
	long, err := testCases.CreateTestCase(h.ctx, testcase.CreateParams{PromptID: h.canvasID, Title: "long",
		Variables: map[string]any{"topic": "a long enough topic"}})
	require.NoError(t, err)

	done := func(id string) *testcase.Generation {
		t.Helper()
		res, err := generations.Run(h.ctx, id, versionID)
		require.NoError(t, err)
		deadline := time.Now().Add(10 * time.Second)
		for {
			g, err := generations.GetGeneration(h.ctx, res.GenerationID)
			require.NoError(t, err)
			if g.Status == testcase.GenerationCompleted || g.Status == testcase.GenerationFailed {
				return g
			}
			require.True(t, time.Now().Before(deadline), "generation %s is %s", g.ID, g.Status)
			time.Sleep(10 * time.Millisecond)
		}
	}
	g := done(short.ID)
	require.Equal(t, testcase.GenerationCompleted, g.Status)
	assert.Equal(t, want, *g.Output)
	require.NotNil(t, g.Passed)
	assert.True(t, *g.Passed)
	assert.Equal(t, 3, g.Usage.InputTokens, "the usage of the run's model calls")

	g = done(long.ID)
	assert.Equal(t, testcase.GenerationFailed, g.Status)
	require.NotNil(t, g.Error)
	assert.Contains(t, g.Error.Message, workflow.StatusWaitingForReview)
}
