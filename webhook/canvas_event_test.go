package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// canvasWithApps creates a canvas of f's workspace and one application of
// it per subscription.
func canvasWithApps(t *testing.T, f *notifierFixture, subs ...webhook.Subscription) (*canvas.Canvas, []*webhook.Application) {
	t.Helper()
	ctx := context.Background()
	c := &canvas.Canvas{Title: "c", WorkspaceID: f.ws.ID, InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CreatedBy: "alice"}
	require.NoError(t, f.db.CreateCanvas(ctx, c))
	apps := make([]*webhook.Application, len(subs))
	for i, sub := range subs {
		apps[i] = &webhook.Application{WorkspaceID: f.ws.ID, Name: "app", PromptID: &c.ID, EnvironmentName: "production",
			Events: sub, CreatedBy: "alice"}
		require.NoError(t, f.db.CreateApplication(ctx, apps[i], webhook.NewSecret()))
	}
	return c, apps
}

func TestNotifier_HandleCanvasEvent(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		f := newNotifierFixture(t)
		c, apps := canvasWithApps(t, f,
			webhook.Subscription{Enabled: true, URL: "https://a.example/hook", Headers: []webhook.Header{{Name: "x-one", Value: "1"}}},
			webhook.Subscription{Enabled: true, URL: "https://b.example/hook", EventTypes: []string{webhook.EventTaskFailed}},
			webhook.Subscription{Enabled: false, URL: "https://c.example/hook"})
		_, others := canvasWithApps(t, f, webhook.Subscription{Enabled: true, URL: "https://d.example/hook"})
		require.Len(t, others, 1)

		j, err := f.notifier.CanvasEventJob(f.ws.ID, c.ID, "pub-1", webhook.EventPublicationCreated, map[string]string{"versionId": "v"})
		require.NoError(t, err)
		assert.Equal(t, webhook.JobKindCanvasEvent, j.Kind)
		assert.Equal(t, "pub-1", j.RefID)
		require.NoError(t, f.db.EnqueueJob(ctx, j))
		claimed := f.claim(t, webhook.JobKindCanvasEvent)
		require.Len(t, claimed, 1)
		var ce webhook.CanvasEvent
		require.NoError(t, json.Unmarshal(claimed[0].Payload, &ce))

		require.NoError(t, f.notifier.HandleCanvasEvent(ctx, claimed[0]))
		require.NoError(t, f.notifier.HandleCanvasEvent(ctx, claimed[0]), "a second handling is not an error")
		assert.Equal(t, 1, f.woken, "the second handling enqueued nothing")
		jobs := f.claim(t, webhook.JobKind)
		require.Len(t, jobs, 1, "one delivery, to the one subscription of the canvas that takes the event")
		var d webhook.Delivery
		require.NoError(t, json.Unmarshal(jobs[0].Payload, &d))
		assert.Equal(t, apps[0].ID, d.ApplicationID)
		assert.Equal(t, "https://a.example/hook", d.URL)
		assert.Equal(t, apps[0].Events.Headers, d.Headers)
		assert.Equal(t, webhook.EventPublicationCreated, d.Event.Type)
		assert.True(t, ce.Timestamp.Equal(d.Event.Timestamp), "the event is timestamped when the change was written")
		assert.JSONEq(t, `{"versionId":"v"}`, string(d.Event.Data))
		assert.Equal(t, "pub-1", jobs[0].RefID)

		logged, err := f.db.GetDelivery(ctx, f.ws.ID, d.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusPending, logged.Status, "the delivery is logged with its job")
	})
	t.Run("NoSubscription", func(t *testing.T) {
		f := newNotifierFixture(t)
		c, _ := canvasWithApps(t, f, webhook.Subscription{Enabled: false, URL: "https://a.example/hook"})
		j, err := f.notifier.CanvasEventJob(f.ws.ID, c.ID, "g-1", webhook.EventGenerationCompleted, map[string]string{})
		require.NoError(t, err)
		j.ID = "11111111-1111-4111-8111-111111111111"
		require.NoError(t, f.notifier.HandleCanvasEvent(ctx, j))
		assert.Zero(t, f.woken)
		assert.Empty(t, f.claim(t, webhook.JobKind))
	})
	t.Run("BadPayload", func(t *testing.T) {
		f := newNotifierFixture(t)
		for _, payload := range []string{`[]`, `{"type":"publication.created"}`} {
			err := f.notifier.HandleCanvasEvent(ctx, &queue.Job{WorkspaceID: f.ws.ID, Kind: webhook.JobKindCanvasEvent,
				Payload: json.RawMessage(payload)})
			require.Error(t, err, payload)
			assert.True(t, queue.IsPermanent(err), "%s: %v", payload, err)
		}
	})
	t.Run("DeliveredOnceAfterALostCompletion", func(t *testing.T) {
		// A worker handles the outbox job, then stops before completing it
		// (its lease expires); the next worker handles it again. The
		// subscription hears of the event once.
		f := newNotifierFixture(t)
		rc := newReceiver(t)
		c, _ := canvasWithApps(t, f, webhook.Subscription{Enabled: true, URL: rc.URL + "/hook"})
		j, err := f.notifier.CanvasEventJob(f.ws.ID, c.ID, "pub-1", webhook.EventPublicationCreated, map[string]string{"versionId": "v"})
		require.NoError(t, err)
		require.NoError(t, f.db.EnqueueJob(ctx, j))
		lost, err := f.db.ClaimJobs(ctx, "crashed", []string{webhook.JobKindCanvasEvent}, 1, time.Millisecond)
		require.NoError(t, err)
		require.Len(t, lost, 1)
		require.NoError(t, f.notifier.HandleCanvasEvent(ctx, lost[0]))

		d := &webhook.Deliverer{Sender: localSender(), Log: f.db, Subscriptions: f.db, Schedule: []time.Duration{time.Millisecond}}
		w := queue.NewWorker(f.db, queue.WorkerOptions{PollInterval: 5 * time.Millisecond, Lease: 5 * time.Second})
		w.Handle(webhook.JobKind, d.Handle)
		w.Handle(webhook.JobKindCanvasEvent, f.notifier.HandleCanvasEvent)
		runCtx, cancel := context.WithCancel(ctx)
		stopped := make(chan error, 1)
		go func() { stopped <- w.Run(runCtx) }()
		defer func() {
			cancel()
			assert.NoError(t, <-stopped)
		}()

		done := waitDone(t, f.db, j.ID)
		assert.Equal(t, queue.StatusSucceeded, done.Status)
		assert.Equal(t, 2, done.Attempts, "handled twice")
		var page *webhook.DeliveryPage
		require.Eventually(t, func() bool {
			page, err = f.db.ListDeliveries(ctx, webhook.DeliveryFilter{WorkspaceID: f.ws.ID, Limit: 10})
			return err == nil && page.Total == 1 && page.Items[0].Status == webhook.StatusSucceeded
		}, 10*time.Second, 2*time.Millisecond)
		got := rc.requests()
		require.Len(t, got, 1, "delivered once")
		assert.Equal(t, page.Items[0].ID, got[0].Header.Get("webhook-id"))
		assert.Contains(t, string(got[0].Body), `"type":"publication.created"`)
	})
}

// TestNotifier_HandleCanvasEvent_LaterSubscription checks that an event
// goes to the subscriptions that existed when it committed: one created
// while the event's job waits in the queue gets nothing.
func TestNotifier_HandleCanvasEvent_LaterSubscription(t *testing.T) {
	ctx := context.Background()
	f := newNotifierFixture(t)
	c, apps := canvasWithApps(t, f, webhook.Subscription{Enabled: true, URL: "https://a.example/hook"})
	time.Sleep(2 * time.Millisecond) // the event comes strictly after the first application
	j, err := f.notifier.CanvasEventJob(f.ws.ID, c.ID, "pub-1", webhook.EventPublicationCreated, map[string]string{"versionId": "v"})
	require.NoError(t, err)
	require.NoError(t, f.db.EnqueueJob(ctx, j))

	time.Sleep(2 * time.Millisecond) // the next application is created strictly after the event
	later := &webhook.Application{WorkspaceID: f.ws.ID, Name: "later", PromptID: &c.ID, EnvironmentName: "production",
		Events: webhook.Subscription{Enabled: true, URL: "https://later.example/hook"}, CreatedBy: "alice"}
	require.NoError(t, f.db.CreateApplication(ctx, later, webhook.NewSecret()))

	claimed := f.claim(t, webhook.JobKindCanvasEvent)
	require.Len(t, claimed, 1)
	require.NoError(t, f.notifier.HandleCanvasEvent(ctx, claimed[0]))
	jobs := f.claim(t, webhook.JobKind)
	require.Len(t, jobs, 1, "only the subscription that existed when the event committed")
	var d webhook.Delivery
	require.NoError(t, json.Unmarshal(jobs[0].Payload, &d))
	assert.Equal(t, apps[0].ID, d.ApplicationID)
}
