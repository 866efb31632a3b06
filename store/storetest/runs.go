package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run returns a queued async completion run of c's version v, not yet
// stored.
func (f *fixture) Run(v *canvas.Version) *completion.Run {
	return &completion.Run{
		WorkspaceID: v.WorkspaceID, Kind: completion.KindCompletion, CanvasID: v.PromptID, VersionID: v.ID,
		Model: model.EchoModel, Status: completion.StatusQueued, Async: true,
		Request: model.Request{Model: model.EchoModel,
			Messages: []model.Message{{Role: canvas.RoleSystem, Content: "hello"}}},
		WebhookURL:     "https://example.com/hook",
		ForwardHeaders: []webhook.Header{{Name: "tenant", Value: "t1"}},
		CreatedBy:      "alice",
	}
}

func testRuns(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWithJob", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		job := &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindCompletion}
		require.NoError(t, f.s.CreateRun(f.ctx, r, job))
		require.NotEmpty(t, r.ID)
		assert.False(t, r.CreatedAt.IsZero())
		assert.Nil(t, r.CompletedAt)

		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r.Request, got.Request)
		assert.Equal(t, r.ForwardHeaders, got.ForwardHeaders)
		assert.Equal(t, r.WebhookURL, got.WebhookURL)
		assert.Equal(t, completion.StatusQueued, got.Status)
		assert.True(t, got.Async)
		assert.True(t, r.CreatedAt.Equal(got.CreatedAt))

		j, err := f.s.GetJob(f.ctx, job.ID)
		require.NoError(t, err)
		assert.Equal(t, r.ID, j.RefID, "the job serves the run")
		assert.Equal(t, queue.StatusQueued, j.Status)
	})
	run(t, newStore, "CreateTerminal", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		r.ID, r.Async, r.Status = "0b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", false, completion.StatusCompleted
		r.Usage = model.Usage{InputTokens: 3, OutputTokens: 1}
		r.LatencyMs = 12
		r.Result = &completion.Response{ID: r.ID, Object: completion.ResponseObject, Created: 1,
			Choices: []completion.Choice{{Message: completion.ChoiceMessage{Role: canvas.RoleAssistant,
				Content: completion.Content{Text: "hello"}}}}}
		require.NoError(t, f.s.CreateRun(f.ctx, r, nil))
		assert.Equal(t, "0b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", r.ID, "a given id is kept")
		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		require.NotNil(t, got.CompletedAt)
		assert.Equal(t, r.Result, got.Result)
		assert.Equal(t, r.Usage, got.Usage)
		assert.Equal(t, int64(12), got.LatencyMs)
		_, err = f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, r, nil))
		other := f.Workspace("other")
		_, err := f.s.GetRun(f.ctx, other.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetRun(f.ctx, f.ws.ID, "8a6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b")
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.StartRun(f.ctx, other.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "StartAndFinish", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, r, &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindCompletion}))
		started, err := f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, completion.StatusRunning, started.Status)
		_, err = f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err, "a running run may be started again by a re-claimed job")

		started.Status = completion.StatusFailed
		started.Error = &completion.RunError{Code: canvas.EPROVIDER, Message: "down",
			Details: []canvas.Detail{{Path: "/output", Message: "bad"}}}
		started.Usage = model.Usage{InputTokens: 4, OutputTokens: 2}
		notify, err := webhook.NewJob(r.WorkspaceID, r.ID, webhook.Delivery{URL: r.WebhookURL,
			Event: webhook.Event{Type: webhook.EventCompletionFailed, Data: json.RawMessage(`{}`)}})
		require.NoError(t, err)
		require.NoError(t, f.s.FinishRun(f.ctx, started, notify))
		require.NotNil(t, started.CompletedAt)

		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, completion.StatusFailed, got.Status)
		assert.Equal(t, started.Error, got.Error)
		assert.Equal(t, started.Usage, got.Usage)
		assert.NotNil(t, got.CompletedAt)
		j, err := f.s.GetJob(f.ctx, notify.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.JobKind, j.Kind, "the delivery job was written with the final state")

		again, err := webhook.NewJob(r.WorkspaceID, r.ID, webhook.Delivery{URL: r.WebhookURL})
		require.NoError(t, err)
		again.ID = "5c0d7e1a-2b3c-4d5e-8f90-a1b2c3d4e5f6"
		requireCode(t, canvas.ECONFLICT, f.s.FinishRun(f.ctx, started, again))
		_, err = f.s.GetJob(f.ctx, again.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ECONFLICT, err)
	})
	testRunCommits(t, newStore)
	run(t, newStore, "FinishNeedsTerminal", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, r, nil))
		r.Status = completion.StatusRunning
		requireCode(t, canvas.EINVALID, f.s.FinishRun(f.ctx, r, nil))
	})
}

func testRunCommits(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ConcurrentRecords", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		const n = 40
		runs := make([]*completion.Run, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range runs {
			runs[i] = f.Run(v)
			runs[i].Async, runs[i].Status = false, completion.StatusCompleted
		}
		runs[0].ID = "6e1c3f0a-1b2c-4d3e-9f80-a1b2c3d4e5f6"
		runs[n-1].ID = runs[0].ID // collides with the first: fails alone
		require.NoError(t, f.s.CreateRun(f.ctx, runs[0], nil))
		for i := 1; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f.s.CreateRun(f.ctx, runs[i], nil)
			}()
		}
		wg.Wait()
		requireCode(t, canvas.ECONFLICT, errs[n-1])
		for i := 1; i < n-1; i++ {
			require.NoError(t, errs[i])
			got, err := f.s.GetRun(f.ctx, f.ws.ID, runs[i].ID)
			require.NoError(t, err, "every record a caller was answered for is stored")
			assert.Equal(t, completion.StatusCompleted, got.Status)
			assert.NotNil(t, got.CompletedAt)
		}
	})
	run(t, newStore, "CancelledContext", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		r.ID = "7e1c3f0a-1b2c-4d3e-9f80-a1b2c3d4e5f6"
		ctx, cancel := context.WithCancel(f.ctx)
		cancel()
		require.Error(t, f.s.CreateRun(ctx, r, nil))
		_, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
}
