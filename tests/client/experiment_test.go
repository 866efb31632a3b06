package clienttest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestClient_Experiment starts an experiment over a production baseline
// and a candidate that regresses on one case, waits for it with progress,
// and reads its results and compare, as a CI job would.
func TestClient_Experiment(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, c, 2)
	f.publish(t, c, "production", 1)
	for _, name := range []string{"Ada", "Grace", "Linus"} {
		expected := "Prompt 1 for " + name
		if name == "Ada" {
			expected = "Prompt 2 for Ada"
		}
		_, err := c.CreateTestCase(ctx, wire.CreateTestCaseParams{PromptID: f.Canvas.ID, Title: name,
			Variables: map[string]any{"name": name}, ExpectedOutput: &expected})
		require.NoError(t, err)
	}

	x, err := c.StartExperiment(ctx, wire.ExperimentRequest{PromptID: f.Canvas.ID,
		VersionIDs: []string{f.Versions[0].ID, f.Versions[1].ID},
		Evaluators: []wire.ExperimentEvaluator{{Name: "exact", Type: "exact"}}})
	require.NoError(t, err)
	assert.Equal(t, wire.ExperimentQueued, x.Status)

	var readings int
	done, err := c.WaitExperiment(ctx, x.ID, 20*time.Millisecond, func(*wire.Experiment) { readings++ })
	require.NoError(t, err)
	assert.Positive(t, readings)
	require.Equal(t, wire.ExperimentCompleted, done.Status)
	assert.Equal(t, wire.ExperimentProgress{Done: 6, Total: 6}, done.Progress)
	base, cand := done.Version(f.Versions[0].ID), done.Version(f.Versions[1].ID)
	require.NotNil(t, base)
	require.NotNil(t, cand)
	assert.Equal(t, 2, base.Totals.Passed)
	assert.Equal(t, 1, cand.Totals.Passed)
	assert.InDelta(t, 1.0/3, *cand.Totals.PassRate, 1e-9)

	cmp, err := c.CompareExperiment(ctx, x.ID, f.Versions[0].ID, f.Versions[1].ID)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1, 0}, []int{cmp.Regressions, cmp.Improvements, cmp.Unchanged})

	page, err := c.ExperimentResults(ctx, x.ID, client.ResultsFilter{VersionID: f.Versions[1].ID, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, 3, page.Meta.TotalCount)
	require.Len(t, page.Data, 2)
	r, err := c.AnnotateResult(ctx, x.ID, page.Data[0].ID, wire.AnnotationRequest{Passed: ptr(true), Comment: "ok"})
	require.NoError(t, err)
	assert.True(t, *r.Passed)

	_, err = c.CancelExperiment(ctx, x.ID)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, wire.CodeConflict, ce.Code)
}

func ptr[T any](v T) *T { return &v }
