package review_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/review"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// sampleEnv is an engine on SQLite in a temp dir, running its background
// work, and an editor of its default workspace.
type sampleEnv struct {
	e   *engine.Engine
	ctx context.Context
}

func newSampleEnv(t *testing.T) *sampleEnv {
	t.Helper()
	ctx := context.Background()
	e, err := engine.OpenSQLite(ctx, t.TempDir(), engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	go e.Run(ctx)
	_, _, err = e.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	return &sampleEnv{e: e, ctx: canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada",
		Role: canvas.RoleEditor})}
}

// Canvas creates a canvas sampling pct of its live runs, with a version of
// the echo model.
func (s *sampleEnv) Canvas(t *testing.T, pct string) (*canvas.Canvas, *canvas.Version) {
	t.Helper()
	c, err := s.e.Canvases.CreateCanvas(s.ctx, canvas.CreateCanvasParams{Title: "sampled " + pct, InferencesPercentage: pct})
	require.NoError(t, err)
	v, err := s.e.Canvases.CreateVersion(s.ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Message:   &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Say hi to {{name}}."}})
	require.NoError(t, err)
	return c, v
}

// LiveRuns runs v n times as live runs, 8 at once, and returns the runs'
// ids.
func (s *sampleEnv) LiveRuns(t *testing.T, v *canvas.Version, n int) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	ids := map[string]bool{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				run, err := s.e.Completions.Run(s.ctx, completion.RunParams{CanvasID: v.PromptID, VersionID: v.ID,
					Variables: map[string]any{"name": fmt.Sprint("user ", i)}, Live: true})
				if !assert.NoError(t, err) {
					continue
				}
				mu.Lock()
				ids[run.ID] = true
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	require.Len(t, ids, n)
	return ids
}

// Queue returns the run ids of every item of c's queue.
func (s *sampleEnv) Queue(t *testing.T, c *canvas.Canvas) map[string]bool {
	t.Helper()
	queued := map[string]bool{}
	for offset := 0; ; offset += review.MaxListLimit {
		items, total, err := s.e.Review.List(s.ctx, review.ListParams{PromptID: c.ID, Limit: review.MaxListLimit,
			Offset: offset})
		require.NoError(t, err)
		for _, it := range items {
			assert.Equal(t, review.SourceSampled, it.Source)
			assert.Equal(t, review.StatusPending, it.Status)
			queued[it.RunID] = true
		}
		if offset+len(items) >= total {
			require.Len(t, queued, total)
			return queued
		}
	}
}

func TestSample_ShareOfLiveRuns(t *testing.T) {
	s := newSampleEnv(t)
	c, v := s.Canvas(t, "20")
	runs := s.LiveRuns(t, v, 2000)
	queued := s.Queue(t, c)
	assert.InDelta(t, 400, len(queued), 60, "20 %% ± 3 of 2,000 live runs are queued")
	for id := range runs {
		want := completion.SampleBucket(id) < 2000
		assert.Equal(t, want, queued[id], "run %s is queued by its id's bucket", id)
	}
	for id := range queued {
		assert.True(t, runs[id], "only the canvas's live runs are queued")
	}

	none, v0 := s.Canvas(t, "0")
	s.LiveRuns(t, v0, 200)
	assert.Empty(t, s.Queue(t, none), "0 %% queues none")
}

func TestSample_AllButTestCaseRuns(t *testing.T) {
	s := newSampleEnv(t)
	c, v := s.Canvas(t, "100")
	runs := s.LiveRuns(t, v, 200)

	// Test case runs of the same canvas are not live: none is queued.
	for i := range 20 {
		_, err := s.e.TestCases.CreateTestCase(s.ctx, testcase.CreateParams{PromptID: c.ID,
			Variables: map[string]any{"name": fmt.Sprint("case ", i)}})
		require.NoError(t, err)
	}
	res, err := s.e.Generations.RunBatch(s.ctx, testcase.BatchParams{PromptID: c.ID, PromptVersionID: v.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ex, err := s.e.Generations.GetExecution(s.ctx, res.ExecutionID)
		require.NoError(t, err)
		return ex.Counts.Completed == 20
	}, 30*time.Second, 20*time.Millisecond, "the test cases run")
	all, total, err := s.e.Completions.ListRuns(s.ctx, completion.ListParams{CanvasID: c.ID, Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, all)
	assert.Equal(t, 220, total, "the test case runs are recorded as runs of the canvas")

	// Runs without Live (an embedder's call) are not queued either.
	_, err = s.e.Completions.Run(s.ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID,
		Variables: map[string]any{"name": "embedded"}})
	require.NoError(t, err)
	assert.Equal(t, runs, s.Queue(t, c), "100 %% queues every live run and nothing else")
}
