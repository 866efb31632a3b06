package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// StoredRun stores a completion run of v in status, created by by.
func (f *fixture) StoredRun(v *canvas.Version, status, by string) *completion.Run {
	f.t.Helper()
	r := f.Run(v)
	r.Status, r.CreatedBy = status, by
	require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r,
		Job: &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindCompletion}}))
	return r
}

// StoredTask stores a queued task of the fixture's workspace created by by.
func (f *fixture) StoredTask(by string) *completion.Run {
	f.t.Helper()
	r := &completion.Run{WorkspaceID: f.ws.ID, Kind: completion.KindTask, Model: model.EchoModel,
		Status: completion.StatusQueued, Async: true, CreatedBy: by,
		Request: model.Request{Model: model.EchoModel, Messages: []model.Message{{Role: canvas.RoleUser, Content: "hi"}}}}
	require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r,
		Job: &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindTask}}))
	return r
}

func completionRunID(r *completion.Run) string { return r.ID }
func fileID(f *vault.File) string              { return f.ID }

// newestFirst returns the ids of list from the last created to the first.
func newestFirst[T any](list []T, id func(T) string) []string {
	out := ids(list, id)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func testLists(t *testing.T, newStore func(t *testing.T) store.Store) {
	listRuns := func(f *fixture, filter completion.RunFilter) ([]string, int) {
		f.t.Helper()
		if filter.WorkspaceID == "" {
			filter.WorkspaceID = f.ws.ID
		}
		if filter.Scope.WorkspaceID == "" {
			filter.Scope.WorkspaceID = filter.WorkspaceID
		}
		if filter.Limit == 0 {
			filter.Limit = 100
		}
		runs, total, err := f.s.ListRuns(f.ctx, filter)
		require.NoError(f.t, err)
		return ids(runs, completionRunID), total
	}
	run(t, newStore, "RunsNewestFirstByKindAndPage", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		var runs []*completion.Run
		for range 4 {
			runs = append(runs, f.StoredRun(v, completion.StatusQueued, "alice"))
		}
		task := f.StoredTask("alice")

		got, total := listRuns(f, completion.RunFilter{Kind: completion.KindCompletion})
		assert.Equal(t, 4, total)
		assert.Equal(t, newestFirst(runs, completionRunID), got, "newest first, ties in reverse order of creation")
		got, total = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Limit: 2, Offset: 1})
		assert.Equal(t, 4, total, "the total counts every run the filter selects")
		assert.Equal(t, newestFirst(runs, completionRunID)[1:3], got)
		got, total = listRuns(f, completion.RunFilter{Kind: completion.KindTask})
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{task.ID}, got)

		stored, _, err := f.s.ListRuns(f.ctx, completion.RunFilter{WorkspaceID: f.ws.ID, Kind: completion.KindTask,
			Scope: canvas.Scope{WorkspaceID: f.ws.ID}, Limit: 1})
		require.NoError(t, err)
		one, err := f.s.GetRun(f.ctx, f.ws.ID, task.ID)
		require.NoError(t, err)
		assert.Equal(t, one, stored[0], "a listed run is the stored run")

		other := f.Workspace("other")
		got, total = listRuns(f, completion.RunFilter{WorkspaceID: other.ID, Kind: completion.KindCompletion})
		assert.Zero(t, total, "another workspace lists none")
		assert.Empty(t, got)
	})
	run(t, newStore, "RunsFiltered", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		d := f.Version(f.Canvas("d", f.Project("q"), "alice"), "three")
		a := f.StoredRun(v1, completion.StatusQueued, "alice")
		b := f.StoredRun(v2, completion.StatusRunning, "alice")
		e := f.StoredRun(d, completion.StatusQueued, "alice")

		got, _ := listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, CanvasID: c.ID})
		assert.Equal(t, []string{b.ID, a.ID}, got, "by canvas")
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, VersionID: v2.ID})
		assert.Equal(t, []string{b.ID}, got, "by version")
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Status: completion.StatusQueued})
		assert.Equal(t, []string{e.ID, a.ID}, got, "by status")

		// Since is inclusive, Until exclusive, both on CreatedAt as stored.
		all := []*completion.Run{a, b, e}
		got, total := listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Since: b.CreatedAt})
		var want []string
		for i := len(all) - 1; i >= 0; i-- {
			if !all[i].CreatedAt.Before(b.CreatedAt) {
				want = append(want, all[i].ID)
			}
		}
		assert.Equal(t, want, got, "created at or after since")
		assert.Equal(t, len(want), total)
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Until: b.CreatedAt})
		want = nil
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].CreatedAt.Before(b.CreatedAt) {
				want = append(want, all[i].ID)
			}
		}
		assert.Equal(t, want, got, "created before until")
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion,
			Since: e.CreatedAt.Add(time.Hour)})
		assert.Empty(t, got, "none created after the last")
	})
	run(t, newStore, "RunsScoped", func(t *testing.T, f *fixture) {
		p, q := f.Project("p"), f.Project("q")
		inP := f.StoredRun(f.Version(f.Canvas("c", p, "alice"), "x"), completion.StatusQueued, "alice")
		inQ := f.StoredRun(f.Version(f.Canvas("d", q, "alice"), "x"), completion.StatusQueued, "alice")
		bobDraft := f.StoredRun(f.Version(f.Canvas("bob's", nil, "bob"), "x"), completion.StatusQueued, "bob")
		gone := f.Canvas("gone", p, "alice")
		f.StoredRun(f.Version(gone, "x"), completion.StatusQueued, "alice")
		require.NoError(t, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: gone.ID, By: "alice"}))
		aliceTask, bobTask := f.StoredTask("alice"), f.StoredTask("bob")

		got, total := listRuns(f, completion.RunFilter{Kind: completion.KindCompletion})
		assert.Equal(t, []string{inQ.ID, inP.ID}, got, "runs of live project canvases; no draft, no deleted canvas")
		assert.Equal(t, 2, total)
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Scope: canvas.Scope{UserID: "bob"}})
		assert.Equal(t, []string{bobDraft.ID, inQ.ID, inP.ID}, got, "and the drafts of the scope's user")
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Scope: canvas.Scope{Projects: []string{p.ID}}})
		assert.Equal(t, []string{inP.ID}, got, "the scope's projects only")
		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindCompletion, Scope: canvas.Scope{Projects: []string{}}})
		assert.Empty(t, got, "no project reaches none")

		got, _ = listRuns(f, completion.RunFilter{Kind: completion.KindTask, Scope: canvas.Scope{Projects: []string{p.ID}}})
		assert.Equal(t, []string{bobTask.ID, aliceTask.ID}, got, "a scope does not narrow the runs of no canvas")
		got, total = listRuns(f, completion.RunFilter{Kind: completion.KindTask, Actor: "alice"})
		assert.Equal(t, []string{aliceTask.ID}, got, "an actor keeps its own runs of no canvas")
		assert.Equal(t, 1, total)
	})

	listFiles := func(f *fixture, filter vault.FileFilter) ([]string, int) {
		f.t.Helper()
		if filter.WorkspaceID == "" {
			filter.WorkspaceID = f.ws.ID
		}
		if filter.Limit == 0 {
			filter.Limit = 100
		}
		files, total, err := f.s.ListFiles(f.ctx, filter)
		require.NoError(f.t, err)
		return ids(files, fileID), total
	}
	run(t, newStore, "Files", func(t *testing.T, f *fixture) {
		var files []*vault.File
		for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
			file, _ := f.PendingFile(name)
			files = append(files, file)
		}
		bobs := &vault.File{FileName: "bob.txt", Status: vault.StatusPending, WorkspaceID: f.ws.ID, CreatedBy: "bob",
			ExpiresAt: time.Now().Add(time.Hour).Truncate(time.Second)}
		require.NoError(t, f.s.CreateFile(f.ctx, bobs, &queue.Job{WorkspaceID: f.ws.ID, Kind: vault.JobKindExpire,
			RunAt: bobs.ExpiresAt}))
		uploaded, err := f.s.MarkUploaded(f.ctx, files[1].ID, uploadOf("k1"))
		require.NoError(t, err)

		got, total := listFiles(f, vault.FileFilter{})
		assert.Equal(t, 4, total)
		assert.Equal(t, append([]string{bobs.ID}, newestFirst(files, fileID)...), got, "newest first")
		page, _, err := f.s.ListFiles(f.ctx, vault.FileFilter{WorkspaceID: f.ws.ID, Status: vault.StatusUploaded, Limit: 10})
		require.NoError(t, err)
		require.Len(t, page, 1)
		assert.Equal(t, uploaded, page[0], "a listed file is the stored file")
		got, _ = listFiles(f, vault.FileFilter{Status: vault.StatusPending, CreatedBy: "alice"})
		assert.Equal(t, []string{files[2].ID, files[0].ID}, got, "by status and creator")
		got, total = listFiles(f, vault.FileFilter{Limit: 2, Offset: 2})
		assert.Equal(t, 4, total)
		assert.Equal(t, []string{files[1].ID, files[0].ID}, got, "a page")
		other := f.Workspace("other")
		got, total = listFiles(f, vault.FileFilter{WorkspaceID: other.ID})
		assert.Zero(t, total)
		assert.Empty(t, got)
	})

	run(t, newStore, "WorkflowRunsAcrossCanvases", func(t *testing.T, f *fixture) {
		p, q := f.Project("p"), f.Project("q")
		c := f.Canvas("c", p, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		inQ := f.Version(f.Canvas("d", q, "alice"), "x")
		draft := f.Version(f.Canvas("bob's", nil, "bob"), "x")
		a := f.CreateWorkflowRun(f.WorkflowRun(v1))
		b := f.CreateWorkflowRun(f.WorkflowRun(v2))
		d := f.CreateWorkflowRun(f.WorkflowRun(inQ))
		dr := f.CreateWorkflowRun(f.WorkflowRun(draft))
		list := func(filter workflow.RunFilter) []string {
			t.Helper()
			filter.Limit = 100
			runs, total, err := f.s.ListWorkflowRuns(f.ctx, f.ws.ID, filter)
			require.NoError(t, err)
			assert.Equal(t, len(runs), total)
			return ids(runs, runID)
		}
		assert.Equal(t, []string{dr.ID, d.ID, b.ID, a.ID}, list(workflow.RunFilter{}), "without reach: every run")
		assert.Equal(t, []string{d.ID, b.ID, a.ID}, list(workflow.RunFilter{Reach: &canvas.Scope{WorkspaceID: f.ws.ID}}),
			"reach: live project canvases")
		assert.Equal(t, []string{dr.ID, b.ID, a.ID}, list(workflow.RunFilter{
			Reach: &canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{p.ID}, UserID: "bob"}}), "reach: a project and bob's drafts")
		assert.Equal(t, []string{b.ID}, list(workflow.RunFilter{VersionID: v2.ID}), "by version")
		var want []string
		for _, r := range []*workflow.Run{dr, d, b, a} {
			if !r.CreatedAt.Before(b.CreatedAt) {
				want = append(want, r.ID)
			}
		}
		assert.Equal(t, want, list(workflow.RunFilter{Since: b.CreatedAt}), "created at or after since")
		want = nil
		for _, r := range []*workflow.Run{dr, d, b, a} {
			if r.CreatedAt.Before(d.CreatedAt) {
				want = append(want, r.ID)
			}
		}
		assert.Equal(t, want, list(workflow.RunFilter{Until: d.CreatedAt}), "created before until")
	})
}
