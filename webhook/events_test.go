package webhook_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
)

func TestTakes(t *testing.T) {
	app := func(enabled bool, url string, types ...string) *webhook.Application {
		return &webhook.Application{Events: webhook.Subscription{Enabled: enabled, URL: url, EventTypes: types}}
	}
	assert.True(t, webhook.Takes(app(true, "https://x.example"), webhook.EventCompletionFailed), "no filter takes all")
	assert.True(t, webhook.Takes(app(true, "https://x.example", webhook.EventTaskFailed), webhook.EventTaskFailed))
	assert.False(t, webhook.Takes(app(true, "https://x.example", webhook.EventTaskFailed), webhook.EventTaskSucceeded), "filtered out")
	assert.False(t, webhook.Takes(app(false, "https://x.example"), webhook.EventTaskFailed), "disabled")
	assert.False(t, webhook.Takes(app(true, ""), webhook.EventTaskFailed), "no URL")
}

// notifierFixture is a Notifier over a real store with one workspace.
type notifierFixture struct {
	db       *sqlite.DB
	ws       *canvas.Workspace
	notifier *webhook.Notifier
	woken    int
}

func newNotifierFixture(t *testing.T) *notifierFixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := &notifierFixture{db: db, ws: &canvas.Workspace{Name: "acme"}}
	require.NoError(t, db.CreateWorkspace(ctx, f.ws))
	f.notifier = webhook.NewNotifier(webhook.NotifierOptions{Store: db, Notify: func() { f.woken++ }})
	return f
}

func (f *notifierFixture) claim(t *testing.T, kind string) []*queue.Job {
	t.Helper()
	jobs, err := f.db.ClaimJobs(context.Background(), "test", []string{kind}, 100, time.Minute)
	require.NoError(t, err)
	return jobs
}

func TestNotifier_HandleFanout(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		f := newNotifierFixture(t)
		// A fan-out job as earlier releases queued it: the deliveries of
		// one event, in a JSON array.
		ev := webhook.Event{Type: webhook.EventCompletionSucceeded, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{}`)}
		bundled := []webhook.Delivery{
			{ID: "33333333-3333-4333-8333-333333333333", URL: "https://a.example/hook", Event: ev},
			{ID: "44444444-4444-4444-8444-444444444444", URL: "https://b.example/hook", Event: ev},
		}
		payload, err := json.Marshal(bundled)
		require.NoError(t, err)
		require.NoError(t, f.db.EnqueueJob(ctx, &queue.Job{WorkspaceID: f.ws.ID, Kind: webhook.JobKindFanout,
			RefID: "run-1", Payload: payload}))
		claimed := f.claim(t, webhook.JobKindFanout)
		require.Len(t, claimed, 1)
		require.NoError(t, f.notifier.HandleFanout(ctx, claimed[0]))
		assert.Equal(t, 1, f.woken)

		delivered := f.claim(t, webhook.JobKind)
		require.Len(t, delivered, 2)
		urls := map[string]string{}
		for _, j := range delivered {
			var d webhook.Delivery
			require.NoError(t, json.Unmarshal(j.Payload, &d))
			urls[d.URL] = d.ID
			assert.Equal(t, "run-1", j.RefID)
		}
		for _, d := range bundled {
			assert.Equal(t, d.ID, urls[d.URL], "each delivery keeps its webhook-id")
			logged, err := f.db.GetDelivery(ctx, f.ws.ID, d.ID)
			require.NoError(t, err, "each delivery is written with its log row")
			assert.Equal(t, webhook.StatusPending, logged.Status)
		}

		// A claim handled again (its completion lost) writes nothing twice.
		require.NoError(t, f.notifier.HandleFanout(ctx, claimed[0]))
		assert.Empty(t, f.claim(t, webhook.JobKind))
	})
	t.Run("BadPayload", func(t *testing.T) {
		f := newNotifierFixture(t)
		err := f.notifier.HandleFanout(ctx, &queue.Job{WorkspaceID: f.ws.ID, Kind: webhook.JobKindFanout, Payload: json.RawMessage(`{}`)})
		require.Error(t, err)
		assert.Zero(t, f.woken)
	})
}

func TestNotifier_NotifyCanvas(t *testing.T) {
	ctx := context.Background()
	f := newNotifierFixture(t)
	c := &canvas.Canvas{Title: "c", WorkspaceID: f.ws.ID, InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CreatedBy: "alice"}
	require.NoError(t, f.db.CreateCanvas(ctx, c))
	newApp := func(name string, sub webhook.Subscription) *webhook.Application {
		a := &webhook.Application{WorkspaceID: f.ws.ID, Name: name, PromptID: &c.ID, EnvironmentName: "production",
			Events: sub, CreatedBy: "alice"}
		require.NoError(t, f.db.CreateApplication(ctx, a, webhook.NewSecret()))
		return a
	}
	takes := newApp("takes", webhook.Subscription{Enabled: true, URL: "https://a.example/hook",
		Headers: []webhook.Header{{Name: "x-one", Value: "1"}, {Name: "x-two", Value: "2"}}})
	newApp("filtered", webhook.Subscription{Enabled: true, URL: "https://b.example/hook", EventTypes: []string{webhook.EventTaskFailed}})
	newApp("disabled", webhook.Subscription{Enabled: false, URL: "https://c.example/hook"})
	newApp("no url", webhook.Subscription{Enabled: true})
	other := &webhook.Application{WorkspaceID: f.ws.ID, Name: "no canvas", EnvironmentName: "production",
		Events: webhook.Subscription{Enabled: true, URL: "https://d.example/hook"}, CreatedBy: "alice"}
	require.NoError(t, f.db.CreateApplication(ctx, other, webhook.NewSecret()))

	require.NoError(t, f.notifier.NotifyCanvas(ctx, f.ws.ID, c.ID, "pub-1", webhook.EventPublicationCreated, map[string]string{"versionId": "v"}))
	jobs := f.claim(t, webhook.JobKind)
	require.Len(t, jobs, 1)
	var d webhook.Delivery
	require.NoError(t, json.Unmarshal(jobs[0].Payload, &d))
	assert.Equal(t, takes.ID, d.ApplicationID)
	assert.Equal(t, "https://a.example/hook", d.URL)
	assert.Equal(t, takes.Events.Headers, d.Headers)
	assert.Empty(t, d.Secret, "secrets are read at send time, not stored in the job")
	assert.Equal(t, webhook.EventPublicationCreated, d.Event.Type)
	assert.JSONEq(t, `{"versionId":"v"}`, string(d.Event.Data))
	assert.Equal(t, "pub-1", jobs[0].RefID)
	assert.Equal(t, 1, f.woken)

	logged, err := f.db.GetDelivery(ctx, f.ws.ID, d.ID)
	require.NoError(t, err, "the delivery is written with its log row")
	assert.Equal(t, takes.ID, *logged.ApplicationID)

	// An application-scoped lookup of an unknown application yields no
	// delivery.
	none, err := f.notifier.ApplicationDeliveries(ctx, f.ws.ID, "11111111-1111-4111-8111-111111111111", "r", d.Event)
	require.NoError(t, err)
	assert.Empty(t, none)
}
