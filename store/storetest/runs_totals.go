package storetest

import (
	"math"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testRunTotals(t *testing.T, newStore func(t *testing.T) store.Store) {
	// record stores a run of v in status with usage and cost.
	record := func(f *fixture, v *canvas.Version, status string, in, out int, cost *model.Cost) {
		f.t.Helper()
		r := f.Run(v)
		r.Async, r.Status, r.Usage, r.Cost = false, status, model.Usage{InputTokens: in, OutputTokens: out}, cost
		require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
	}
	usd := func(in, out float64) *model.Cost {
		total := math.Round((in+out)*1e9) / 1e9
		return &model.Cost{Input: in, Output: out, Total: total, Currency: model.Currency}
	}
	run(t, newStore, "TotalsByCanvasAndVersion", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		c1, c2 := f.Canvas("c1", p, "alice"), f.Canvas("c2", f.Project("q"), "alice")
		v1, v2, v3 := f.Version(c1, "one"), f.Version(c1, "two"), f.Version(c2, "three")
		record(f, v1, completion.StatusCompleted, 10, 5, usd(0.1, 0.2))
		record(f, v1, completion.StatusCompleted, 1, 1, nil) // no price known
		record(f, v1, completion.StatusQueued, 0, 0, nil)    // not run yet: not unpriced
		record(f, v1, completion.StatusCompleted, 3, 2, usd(0.000000001, 0.000000002))
		record(f, v2, completion.StatusCompleted, 2, 2, usd(0.01, 0.02))
		record(f, v2, completion.StatusFailed, 0, 0, nil)
		record(f, v3, completion.StatusCompleted, 4, 4, nil)
		task := f.Run(v1)
		task.Kind, task.CanvasID, task.VersionID, task.Status, task.Cost = completion.KindTask, "", "",
			completion.StatusCompleted, usd(5, 5)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: task}))
		other := f.Workspace("other")
		ov := *v1
		ov.WorkspaceID = other.ID
		oRun := f.Run(&ov)
		oRun.Status, oRun.Cost = completion.StatusCompleted, usd(7, 7)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: oRun}))

		all := completion.RunFilter{WorkspaceID: f.ws.ID, Kind: completion.KindCompletion,
			Scope: canvas.Scope{WorkspaceID: f.ws.ID}, Limit: 1}
		got, err := f.s.RunTotals(f.ctx, all, 10)
		require.NoError(t, err)
		assert.Equal(t, completion.Sum{Count: 7, InputTokens: 20, OutputTokens: 14, Cost: usd(0.110000001, 0.220000002),
			Unpriced: 2}, got.Sum, "every run of the workspace's canvases, not one page")
		assert.Equal(t, 3, got.GroupCount)
		require.Len(t, got.Groups, 3)
		assert.Equal(t, completion.GroupSum{CanvasID: c1.ID, VersionID: v1.ID, Sum: completion.Sum{Count: 4,
			InputTokens: 14, OutputTokens: 8, Cost: usd(0.100000001, 0.200000002), Unpriced: 1}}, got.Groups[0],
			"the most runs first")
		assert.Equal(t, completion.GroupSum{CanvasID: c1.ID, VersionID: v2.ID, Sum: completion.Sum{Count: 2,
			InputTokens: 2, OutputTokens: 2, Cost: usd(0.01, 0.02)}}, got.Groups[1])
		assert.Equal(t, completion.GroupSum{CanvasID: c2.ID, VersionID: v3.ID, Sum: completion.Sum{Count: 1,
			InputTokens: 4, OutputTokens: 4, Unpriced: 1}}, got.Groups[2], "no cost known: null, unpriced")

		got, err = f.s.RunTotals(f.ctx, all, 1)
		require.NoError(t, err)
		assert.Len(t, got.Groups, 1, "at most maxGroups groups")
		assert.Equal(t, 3, got.GroupCount)
		assert.Equal(t, 7, got.Count, "the sums still count every group")

		scoped := all
		scoped.Scope.Projects, scoped.Status = []string{p.ID}, completion.StatusCompleted
		got, err = f.s.RunTotals(f.ctx, scoped, 10)
		require.NoError(t, err)
		assert.Equal(t, 4, got.Count, "the filter and the scope apply")
		assert.Equal(t, 2, got.GroupCount)

		none := all
		none.VersionID = "00000000-0000-4000-8000-000000000000"
		got, err = f.s.RunTotals(f.ctx, none, 10)
		require.NoError(t, err)
		assert.Equal(t, completion.Sum{}, got.Sum, "no run: zero sums, no cost")
		assert.Empty(t, got.Groups)
		assert.Zero(t, got.GroupCount)

		tasks := all
		tasks.Kind = completion.KindTask
		got, err = f.s.RunTotals(f.ctx, tasks, 10)
		require.NoError(t, err)
		require.Len(t, got.Groups, 1)
		assert.Equal(t, completion.GroupSum{Sum: completion.Sum{Count: 1, Cost: usd(5, 5)}}, got.Groups[0],
			"tasks belong to no canvas")
	})
}
