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

// StartedRun stores a queued async completion run with its job and starts
// it.
func (f *fixture) StartedRun() *completion.Run {
	f.t.Helper()
	r := f.Run(f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello"))
	require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r,
		Job: &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindCompletion}}))
	started, err := f.s.StartRun(f.ctx, f.ws.ID, r.ID)
	require.NoError(f.t, err)
	require.Equal(f.t, completion.StatusRunning, started.Status)
	return started
}

// RunNotification returns a delivery of r's notification to r's webhook
// URL, not yet written.
func (f *fixture) RunNotification(r *completion.Run) webhook.Outgoing {
	f.t.Helper()
	o, err := webhook.NewOutgoing(r.WorkspaceID, r.ID, webhook.Delivery{URL: r.WebhookURL,
		Event: webhook.Event{Type: webhook.EventCompletionSucceeded, Data: json.RawMessage(`{}`)}})
	require.NoError(f.t, err)
	return o
}

func testRuns(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWithJob", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		job := &queue.Job{WorkspaceID: r.WorkspaceID, Kind: completion.JobKindCompletion}
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r, Job: job}))
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
		assert.False(t, got.Stream)
		assert.True(t, r.CreatedAt.Equal(got.CreatedAt))

		j, err := f.s.GetJob(f.ctx, job.ID)
		require.NoError(t, err)
		assert.Equal(t, r.ID, j.RefID, "the job serves the run")
		assert.Equal(t, queue.StatusQueued, j.Status)
	})
	run(t, newStore, "CreateTerminal", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		r.ID, r.Async, r.Stream, r.Status = "0b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", false, true, completion.StatusCompleted
		r.Usage = model.Usage{InputTokens: 3, OutputTokens: 1}
		r.LatencyMs = 12
		r.Result = &completion.Response{ID: r.ID, Object: completion.ResponseObject, Created: 1,
			Choices: []completion.Choice{{Message: completion.ChoiceMessage{Role: canvas.RoleAssistant,
				Content: completion.Content{Text: "hello"}}}}}
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		assert.Equal(t, "0b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", r.ID, "a given id is kept")
		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		require.NotNil(t, got.CompletedAt)
		assert.Equal(t, r.Result, got.Result)
		assert.Equal(t, r.Usage, got.Usage)
		assert.Equal(t, int64(12), got.LatencyMs)
		assert.True(t, got.Stream, "a streamed run is recorded so")
		_, err = f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		other := f.Workspace("other")
		_, err := f.s.GetRun(f.ctx, other.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetRun(f.ctx, f.ws.ID, "8a6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b")
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.StartRun(f.ctx, other.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "StartAndFinish", func(t *testing.T, f *fixture) {
		r := f.StartedRun()
		_, err := f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err, "a running run may be started again by a re-claimed job")

		r.Status = completion.StatusFailed
		r.Error = &completion.RunError{Code: canvas.EPROVIDER, Message: "down",
			Details: []canvas.Detail{{Path: "/output", Message: "bad"}}}
		r.Usage = model.Usage{InputTokens: 4, OutputTokens: 2}
		require.NoError(t, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r}))
		require.NotNil(t, r.CompletedAt)

		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, completion.StatusFailed, got.Status)
		assert.Equal(t, r.Error, got.Error)
		assert.Equal(t, r.Usage, got.Usage)
		assert.NotNil(t, got.CompletedAt)
		_, err = f.s.StartRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "FinishWritesNotification", func(t *testing.T, f *fixture) {
		r := f.StartedRun()
		r.Status = completion.StatusCompleted
		url, app := f.RunNotification(r), f.RunNotification(r)
		app.Delivery.ApplicationID = "app-1"
		require.NoError(t, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r, Notify: []webhook.Outgoing{url, app}}))
		for _, o := range []webhook.Outgoing{url, app} {
			st, _ := f.DeliveryStatus(o.Delivery.ID)
			assert.Equal(t, webhook.StatusPending, st, "the delivery was written with the final state")
			assert.Equal(t, queue.StatusQueued, f.GetJob(o.Job.ID).Status)
		}
		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, ApplicationID: "app-1", Limit: 10})
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		assert.Equal(t, app.Delivery.ID, page.Items[0].ID, "each row as given")
	})
	run(t, newStore, "FinishAgainWritesNoNotification", func(t *testing.T, f *fixture) {
		r := f.StartedRun()
		r.Status = completion.StatusCompleted
		require.NoError(t, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r}))
		again := f.RunNotification(r)
		requireCode(t, canvas.ECONFLICT, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r,
			Notify: []webhook.Outgoing{again}}))
		_, err := f.s.GetDelivery(f.ctx, f.ws.ID, again.Delivery.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetJob(f.ctx, again.Job.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "FinishAllOrNothing", func(t *testing.T, f *fixture) {
		r := f.StartedRun()
		r.Status = completion.StatusCompleted
		bad := f.RunNotification(r)
		bad.Delivery.ID = ""
		requireCode(t, canvas.EINVALID, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r,
			Notify: []webhook.Outgoing{f.RunNotification(r), bad}}))
		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, completion.StatusRunning, got.Status, "the run did not finish without its notification")
		page, err := f.s.ListDeliveries(f.ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
		require.NoError(t, err)
		assert.Zero(t, page.Total)
	})
	run(t, newStore, "CreateTerminalWritesNotification", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		r.ID, r.Async, r.Status = "1b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", false, completion.StatusCompleted
		o := f.RunNotification(r)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r, Notify: []webhook.Outgoing{o}}))
		_, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		st, _ := f.DeliveryStatus(o.Delivery.ID)
		assert.Equal(t, webhook.StatusPending, st, "a sync run is recorded with its notification")
		assert.Equal(t, r.ID, f.GetJob(o.Job.ID).RefID)

		// A bad delivery writes neither the run nor the others.
		other := f.Run(v)
		other.ID, other.Async, other.Status = "2b6f3c1e-8a52-4d77-9a3e-0c1d2e3f4a5b", false, completion.StatusCompleted
		ok, bad := f.RunNotification(other), f.RunNotification(other)
		bad.Job.Kind = ""
		requireCode(t, canvas.EINVALID, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: other,
			Notify: []webhook.Outgoing{ok, bad}}))
		_, err = f.s.GetRun(f.ctx, f.ws.ID, other.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetDelivery(f.ctx, f.ws.ID, ok.Delivery.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	testRunCommits(t, newStore)
	run(t, newStore, "FinishNeedsTerminal", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		r.Status = completion.StatusRunning
		requireCode(t, canvas.EINVALID, f.s.FinishRun(f.ctx, completion.FinishRunParams{Run: r}))
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
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: runs[0]}))
		for i := 1; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: runs[i]})
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
		require.Error(t, f.s.CreateRun(ctx, completion.CreateRunParams{Run: r}))
		_, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
}
