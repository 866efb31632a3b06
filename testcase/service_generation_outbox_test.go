package testcase_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// TestGenerationService_FinishedJob checks the outbox of finished
// generations: the job FinishedJob returns commits with the outcome, so it
// exists as soon as HandleJob returns, and a job that cannot be written
// leaves the generation unfinished for the job's retry.
func TestGenerationService_FinishedJob(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	canvases := canvas.NewService(canvas.Options{Store: db})
	c, err := canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	require.NoError(t, err)
	v, err := canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Message: &canvas.MessageInput{Content: "Say hi."}})
	require.NoError(t, err)
	runner := completion.NewService(completion.Options{Store: db, Canvases: db, Environments: env.NewService(env.Options{Store: db, Canvases: db, Changes: db}),
		Models: model.NewCaller(model.Options{})})
	testCases := testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
	tc, err := testCases.CreateTestCase(ctx, testcase.CreateParams{PromptID: c.ID, Title: "hi"})
	require.NoError(t, err)

	woken := 0
	var written []*queue.Job
	fail := false
	svc := testcase.NewGenerationService(testcase.GenerationOptions{TestCases: testCases, Store: db, Runner: runner,
		Notify: func() { woken++ },
		FinishedJob: func(g *testcase.Generation) (*queue.Job, error) {
			data, err := json.Marshal(g)
			if err != nil {
				return nil, err
			}
			j := &queue.Job{WorkspaceID: g.WorkspaceID, Kind: "test.finished", RefID: g.ID, Payload: data}
			if fail {
				j.Kind = "" // a job the store refuses
			}
			written = append(written, j)
			return j, nil
		}})
	// generate runs the test case and handles its job as a worker would.
	generate := func(t *testing.T) (string, error) {
		t.Helper()
		res, err := svc.Run(ctx, tc.ID, v.ID)
		require.NoError(t, err)
		jobs, err := db.ClaimJobs(ctx, "test", []string{testcase.JobKindGenerate}, 1, time.Hour)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		return res.GenerationID, svc.HandleJob(ctx, jobs[0])
	}

	t.Run("OK", func(t *testing.T) {
		id, err := generate(t)
		require.NoError(t, err)
		require.Len(t, written, 1)
		j, err := db.GetJob(ctx, written[0].ID)
		require.NoError(t, err)
		assert.Equal(t, queue.StatusQueued, j.Status, "the job exists as soon as the generation is finished")
		assert.Equal(t, id, j.RefID)
		var g testcase.Generation
		require.NoError(t, json.Unmarshal(j.Payload, &g))
		assert.Equal(t, testcase.GenerationCompleted, g.Status)
		assert.NotNil(t, g.CompletedAt, "the job carries the generation as written")
		assert.Equal(t, 2, woken, "woken for the generation's job, then for the outbox job")
	})
	t.Run("JobNotWritten", func(t *testing.T) {
		fail = true
		defer func() { fail = false }()
		before := woken
		id, err := generate(t)
		require.Error(t, err, "the job is retried")
		g, err := svc.GetGeneration(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, testcase.GenerationRunning, g.Status, "no outcome without its notification")
		assert.Equal(t, before+1, woken, "woken for the generation's job only")
	})
}
