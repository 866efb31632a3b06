package workflow_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// linearTemplates is input → n template steps → output.
func linearTemplates(n int) string {
	nodes := []string{`{"id": "start", "actionId": "input"}`}
	var edges []string
	prev := "start"
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id": %q, "actionId": "template", "config": {"template": "%d"}}`, id, i))
		edges = append(edges, fmt.Sprintf(`{"from": {"node": %q, "port": "out"}, "to": {"node": %q, "port": "in"}}`, prev, id))
		prev = id
	}
	nodes = append(nodes, `{"id": "out", "actionId": "output"}`)
	edges = append(edges, fmt.Sprintf(`{"from": {"node": %q, "port": "out"}, "to": {"node": "out", "port": "in"}}`, prev))
	return `{"specVersion": "1", "nodes": [` + strings.Join(nodes, ", ") + `], "edges": [` + strings.Join(edges, ", ") + `]}`
}

// parallelTemplates is input → n template steps side by side → output.
func parallelTemplates(n int) string {
	nodes := []string{`{"id": "start", "actionId": "input"}`}
	var edges []string
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id": %q, "actionId": "template", "config": {"template": "%d"}}`, id, i))
		edges = append(edges, fmt.Sprintf(`{"from": {"node": "start", "port": "out"}, "to": {"node": %q, "port": "in"}}`, id),
			fmt.Sprintf(`{"from": {"node": %q, "port": "out"}, "to": {"node": "out", "port": "in"}}`, id))
	}
	nodes = append(nodes, `{"id": "out", "actionId": "output"}`)
	return `{"specVersion": "1", "nodes": [` + strings.Join(nodes, ", ") + `], "edges": [` + strings.Join(edges, ", ") + `]}`
}

// benchRuns runs spec to completion b.N times through a sync completion
// (start, execute on the queue worker, wait), with every step's state
// written to SQLite (synchronous=FULL), and reports the time per step. It
// also reports, measured in the same run, what one commit per step write
// would cost: a step's state changes twice (running, then completed), so
// that ceiling is two commits per step.
func benchRuns(b *testing.B, spec string, steps int) {
	h := newHarness(b, harnessOptions{})
	svc := h.completions()
	versionID := h.version(spec)
	ceiling := 2 * commitTime(b, h, versionID)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		run, err := svc.Run(h.ctx, completion.RunParams{CanvasID: h.canvasID, VersionID: versionID})
		require.NoError(b, err)
		require.Equal(b, workflow.StatusCompleted, run.WorkflowStatus)
	}
	perStep := time.Since(start) / time.Duration(b.N*steps)
	b.ReportMetric(float64(perStep.Microseconds())/1000, "ms/step")
	b.ReportMetric(ceiling, "ms/step-one-commit-per-write")
}

// BenchmarkRun_Linear1000 is a 1,000-step linear run of template steps:
// the per-step overhead of the engine with durable step state.
func BenchmarkRun_Linear1000(b *testing.B) { benchRuns(b, linearTemplates(1000), 1002) }

// BenchmarkRun_Parallel100 is 100 parallel template branches joined by one
// output.
func BenchmarkRun_Parallel100(b *testing.B) { benchRuns(b, parallelTemplates(100), 102) }

// commitTime is the time, in milliseconds, of one SaveWorkflowSteps call
// writing one step, each its own commit.
func commitTime(b *testing.B, h *harness, versionID string) float64 {
	b.Helper()
	v, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: versionID})
	require.NoError(b, err)
	run, err := h.db.GetWorkflowRun(h.ctx, canvas.PrincipalFrom(h.ctx).WorkspaceID, v.ID)
	require.NoError(b, err)
	_, err = h.svc.Cancel(h.ctx, v.ID) // the worker must leave it alone; the writes below need a live run
	require.NoError(b, err)
	probe := *run
	probe.ID, probe.ExternalID, probe.Status = "", "", workflow.StatusRunning
	require.NoError(b, h.db.CreateWorkflowRun(h.ctx, &probe, nil))
	st := probe.Steps[0].Clone()
	const n = 100
	start := time.Now()
	for i := range n {
		st.Status = []string{workflow.StepRunning, workflow.StepCompleted}[i%2]
		require.NoError(b, h.db.SaveWorkflowSteps(h.ctx, probe.WorkspaceID, probe.ID, []*workflow.Step{st}))
	}
	return float64(time.Since(start).Microseconds()) / 1000 / n
}
