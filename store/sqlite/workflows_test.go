package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/workflow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchWorkflowRun opens a database with a running run of n template
// steps.
func benchWorkflowRun(b *testing.B, n int) (*DB, *workflow.Run) {
	b.Helper()
	ctx := context.Background()
	db, c, versions := benchCanvas(b, 1)
	v := versions[0]
	r := &workflow.Run{WorkspaceID: c.WorkspaceID, CanvasID: c.ID, VersionID: v.ID,
		Environment: workflow.EnvCraftPreview, Status: workflow.StatusRunning, CreatedBy: "bench",
		Deadline: time.Now().Add(time.Hour)}
	for i := range n {
		r.Steps = append(r.Steps, &workflow.Step{ID: fmt.Sprintf("n%04d", i), Name: "n", ActionID: "template",
			Status: workflow.StepPending, Seq: i})
	}
	require.NoError(b, db.CreateWorkflowRun(ctx, r, nil))
	return db, r
}

// BenchmarkSaveWorkflowSteps measures one step write as the engine makes
// it: Serial is a linear run (each write waits for its commit), Parallel
// many branches whose writes share commits.
func BenchmarkSaveWorkflowSteps(b *testing.B) {
	ctx := context.Background()
	db, r := benchWorkflowRun(b, 100)
	write := func(i int) error {
		s := r.Steps[i%len(r.Steps)].Clone()
		s.Status, s.Output = workflow.StepCompleted, json.RawMessage(`"rendered text of the step"`)
		return db.SaveWorkflowSteps(ctx, r.WorkspaceID, r.ID, []*workflow.Step{s})
	}
	b.Run("Serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := write(i); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if err := write(i); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}

// TestDB_WorkflowRunSurvivesReopen checks that a run and the step writes a
// caller was answered for are on disk: a second Open of the file reads
// them.
func TestDB_WorkflowRunSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db := mustOpen(t, path)
	c, v := dataVersionCanvas(t, db)
	r := &workflow.Run{WorkspaceID: c.WorkspaceID, CanvasID: c.ID, VersionID: v.ID, ExternalID: "exec-1",
		Environment: workflow.EnvAPI, Status: workflow.StatusRunning, CreatedBy: "t", Deadline: time.Now().Add(time.Hour),
		Steps: []*workflow.Step{{ID: "a", Name: "A", ActionID: "input", Status: workflow.StepPending}}}
	require.NoError(t, db.CreateWorkflowRun(ctx, r, nil))
	done := r.Steps[0].Clone()
	done.Status, done.Output = workflow.StepCompleted, json.RawMessage(`{"x":1}`)
	require.NoError(t, db.SaveWorkflowSteps(ctx, r.WorkspaceID, r.ID, []*workflow.Step{done}))
	require.NoError(t, db.Close())

	again := mustOpen(t, path)
	got, err := again.GetWorkflowRun(ctx, r.WorkspaceID, r.ID)
	require.NoError(t, err)
	require.Len(t, got.Steps, 1)
	assert.Equal(t, done, got.Steps[0])
}
