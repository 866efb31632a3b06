package experiment_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// BenchmarkExperiment_Echo runs an experiment of 500 test cases × 2
// versions on the echo model with an exact evaluator, on the engine's
// default concurrency (16) over SQLite, and reports the results written
// per second.
func BenchmarkExperiment_Echo(b *testing.B) {
	const testCases = 500
	w := openWorldWith(b, "", 0)
	c, v1, v2 := w.canvasOf(b)
	for i := range testCases - len(cases) {
		expected := fmt.Sprintf("q%d", i)
		_, err := w.e.TestCases.CreateTestCase(w.ctx, testCaseParams(c.ID, expected, "", &expected))
		require.NoError(b, err)
	}
	req := experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID, v2.ID},
		Evaluators: []experiment.Evaluator{{Name: "exact", Type: testcase.EvaluatorExact}}}
	b.ResetTimer()
	var results int
	start := time.Now()
	for range b.N {
		x, err := w.e.Experiments.Start(w.ctx, req)
		require.NoError(b, err)
		x = w.waitEvery(b, x.ID, 250*time.Millisecond)
		require.Equal(b, experiment.StatusCompleted, x.Status)
		results += x.Progress.Done
	}
	b.ReportMetric(float64(results)/time.Since(start).Seconds(), "results/s")
}
