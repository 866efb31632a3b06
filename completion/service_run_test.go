package completion_test

import (
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
)

// TestService_RunRecords checks the records of sync runs: ids are version 7
// UUIDs in creation order (so that the store's id index grows at its end),
// and every run, alone or concurrent with others sharing its commit, reads
// back as it was returned.
func TestService_RunRecords(t *testing.T) {
	f := testfiles.New(t)
	canvases, envs := canvas.NewService(canvas.Options{Store: f.DB}), env.NewService(env.Options{Store: f.DB, Canvases: f.DB, Changes: f.DB})
	svc := completion.NewService(completion.Options{Store: f.DB, Canvases: f.DB, Environments: envs,
		Models: model.NewCaller(model.Options{})})
	c, err := canvases.CreateCanvas(f.Ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	require.NoError(t, err)
	v, err := canvases.CreateVersion(f.Ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Message:   &canvas.MessageInput{Content: "Hello {{name}}"}})
	require.NoError(t, err)
	_, _, err = envs.Publish(f.Ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
	require.NoError(t, err)
	run := func(name string) *completion.Run {
		r, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: c.ID, Variables: map[string]any{"name": name}})
		require.NoError(t, err)
		return r
	}
	readBack := func(t *testing.T, want *completion.Run) {
		got, err := svc.GetRun(f.Ctx, want.ID)
		require.NoError(t, err)
		assert.Equal(t, want.Request, got.Request)
		assert.Equal(t, want.Result, got.Result)
		assert.Equal(t, completion.StatusCompleted, got.Status)
		require.NotNil(t, got.CompletedAt)
		assert.True(t, got.CompletedAt.Equal(got.CreatedAt), "a sync run is recorded once finished")
	}

	t.Run("TimeOrderedIDs", func(t *testing.T) {
		var prev string
		for _, name := range []string{"Ada", "Grace", "Edsger"} {
			r := run(name)
			id, err := uuid.Parse(r.ID)
			require.NoError(t, err)
			assert.Equal(t, uuid.Version(7), id.Version())
			assert.Greater(t, r.ID, prev, "ids sort in creation order")
			prev = r.ID
			readBack(t, r)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		runs := make([]*completion.Run, 8)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Go(func() {
				r, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: c.ID, Variables: map[string]any{"name": "Ada"}})
				if assert.NoError(t, err) {
					runs[i] = r
				}
			})
		}
		wg.Wait()
		for _, r := range runs {
			require.NotNil(t, r)
			readBack(t, r)
			assert.Equal(t, "Hello Ada", r.Result.Choices[0].Message.Content.Text)
		}
	})
}
