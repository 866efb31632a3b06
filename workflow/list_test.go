package workflow_test

import (
	"time"

	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

func TestService_List(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true}) // the runs stay pending
	var newest []string
	for range 3 {
		newest = append([]string{h.start(linearSpec, map[string]any{"word": "owl"}).ID}, newest...)
	}
	p, err := canvas.Authorize(h.ctx, canvas.RoleViewer)
	require.NoError(t, err)
	viewer := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: p.WorkspaceID, UserID: p.UserID, Role: canvas.RoleViewer})
	summaryIDs := func(list []*workflow.Summary) []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = s.ID
		}
		return out
	}

	t.Run("OK", func(t *testing.T) {
		list, total, err := h.svc.List(viewer, workflow.ListParams{CanvasID: h.canvasID})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		assert.Equal(t, newest, summaryIDs(list), "newest first; a zero limit is the default one")
		run, err := h.svc.Get(h.ctx, list[0].ID)
		require.NoError(t, err)
		assert.Equal(t, &workflow.Summary{ID: run.ID, PromptID: h.canvasID, PromptVersionID: run.PromptVersionID,
			Environment: workflow.EnvCraftPreview, Status: workflow.StatusPending, StartedAt: run.StartedAt,
			Deadline: run.Deadline}, list[0], "the run without its input, steps and output")
	})
	t.Run("Paged", func(t *testing.T) {
		list, total, err := h.svc.List(viewer, workflow.ListParams{CanvasID: h.canvasID, Limit: 1, Offset: 1})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		assert.Equal(t, newest[1:2], summaryIDs(list))
	})
	t.Run("ByStatus", func(t *testing.T) {
		list, total, err := h.svc.List(viewer, workflow.ListParams{CanvasID: h.canvasID, Status: workflow.StatusRunning})
		require.NoError(t, err)
		assert.Zero(t, total)
		assert.Empty(t, list)
	})
	t.Run("Validation", func(t *testing.T) {
		now := time.Now()
		_, _, err := h.svc.List(viewer, workflow.ListParams{CanvasID: "c1", VersionID: "v1", Status: "paused",
			Since: now, Until: now.Add(-time.Minute), Limit: 101, Offset: -1})
		require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
		var e *canvas.Error
		require.ErrorAs(t, err, &e)
		var paths []string
		for _, d := range e.Details {
			paths = append(paths, d.Path)
		}
		assert.Equal(t, []string{"/query/promptId", "/query/versionId", "/query/status", "/query/until",
			"/query/limit", "/query/offset"}, paths)
	})
	t.Run("NotFound", func(t *testing.T) {
		_, _, err := h.svc.List(viewer, workflow.ListParams{CanvasID: uuid.NewString()})
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "%v", err)
	})
	t.Run("Unauthenticated", func(t *testing.T) {
		_, _, err := h.svc.List(context.Background(), workflow.ListParams{CanvasID: h.canvasID})
		assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err), "%v", err)
	})
}
