package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

func TestNotifier_Reaches(t *testing.T) {
	f := newNotifierFixture(t)
	var none *webhook.Notifier
	url := webhook.Target{URL: "https://run.example/hook"}
	app := webhook.Target{ApplicationID: "11111111-1111-4111-8111-111111111111"}
	assert.True(t, f.notifier.Reaches(url))
	assert.True(t, f.notifier.Reaches(app))
	assert.False(t, f.notifier.Reaches(webhook.Target{}))
	assert.True(t, none.Reaches(url), "a nil Notifier still delivers to the URL")
	assert.False(t, none.Reaches(app), "a nil Notifier tells no application")
}

func TestNotifier_RunJob(t *testing.T) {
	ctx := context.Background()
	ev := webhook.Event{Type: webhook.EventWorkflowRunCompleted, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{"id":"r"}`)}
	headers := []webhook.Header{{Name: "trace", Value: "t1"}}
	const deliveryID = "22222222-2222-4222-8222-222222222222"
	unknownApp := "11111111-1111-4111-8111-111111111111"

	// newApp creates an application whose subscription takes types (all
	// when none are given).
	newApp := func(t *testing.T, f *notifierFixture, types ...string) *webhook.Application {
		t.Helper()
		a := &webhook.Application{WorkspaceID: f.ws.ID, Name: "app", EnvironmentName: "production", CreatedBy: "alice",
			Events: webhook.Subscription{Enabled: true, URL: "https://app.example/hook", EventTypes: types}}
		require.NoError(t, f.db.CreateApplication(ctx, a, webhook.NewSecret()))
		return a
	}
	delivery := func(t *testing.T, j *queue.Job) webhook.Delivery {
		t.Helper()
		require.Equal(t, webhook.JobKind, j.Kind)
		var d webhook.Delivery
		require.NoError(t, json.Unmarshal(j.Payload, &d))
		return d
	}
	// urlDelivery checks that j delivers ev to the run's own URL.
	urlDelivery := func(t *testing.T, j *queue.Job) {
		t.Helper()
		d := delivery(t, j)
		assert.Equal(t, "https://run.example/hook", d.URL)
		assert.Equal(t, deliveryID, d.ID)
		assert.Equal(t, headers, d.Headers)
		assert.Empty(t, d.ApplicationID)
		assert.Equal(t, ev.Type, d.Event.Type)
		assert.JSONEq(t, string(ev.Data), string(d.Event.Data))
		assert.Equal(t, "run-1", j.RefID)
	}
	target := func(appID string) webhook.Target {
		return webhook.Target{URL: "https://run.example/hook", Headers: headers, ApplicationID: appID, DeliveryID: deliveryID}
	}

	t.Run("URLAndApplication", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f)
		j, err := f.notifier.RunJob(ctx, f.ws.ID, "run-1", target(a.ID), ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		assert.Equal(t, webhook.JobKindFanout, j.Kind, "two deliveries travel as one job")
		require.NoError(t, f.db.EnqueueJob(ctx, j))
		claimed := f.claim(t, webhook.JobKindFanout)
		require.Len(t, claimed, 1)
		require.NoError(t, f.notifier.HandleFanout(ctx, claimed[0]))

		byURL := map[string]*queue.Job{}
		for _, dj := range f.claim(t, webhook.JobKind) {
			byURL[delivery(t, dj).URL] = dj
		}
		require.Len(t, byURL, 2)
		urlDelivery(t, byURL["https://run.example/hook"])
		sub := delivery(t, byURL["https://app.example/hook"])
		assert.Equal(t, a.ID, sub.ApplicationID)
		assert.NotEqual(t, deliveryID, sub.ID)
	})
	t.Run("ApplicationOnly", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f)
		j, err := f.notifier.RunJob(ctx, f.ws.ID, "run-1", webhook.Target{ApplicationID: a.ID}, ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		d := delivery(t, j)
		assert.Equal(t, "https://app.example/hook", d.URL)
		assert.Equal(t, a.ID, d.ApplicationID)
	})
	t.Run("ApplicationFiltersEventOut", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f, webhook.EventTaskFailed)
		j, err := f.notifier.RunJob(ctx, f.ws.ID, "run-1", target(a.ID), ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		urlDelivery(t, j)

		none, err := f.notifier.RunJob(ctx, f.ws.ID, "run-1", webhook.Target{ApplicationID: a.ID}, ev)
		require.NoError(t, err)
		assert.Nil(t, none)
	})
	t.Run("UnknownApplication", func(t *testing.T) {
		f := newNotifierFixture(t)
		j, err := f.notifier.RunJob(ctx, f.ws.ID, "run-1", target(unknownApp), ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		urlDelivery(t, j)
	})
	t.Run("NilNotifier", func(t *testing.T) {
		var n *webhook.Notifier
		j, err := n.RunJob(ctx, "ws", "run-1", target(unknownApp), ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		urlDelivery(t, j)

		none, err := n.RunJob(ctx, "ws", "run-1", webhook.Target{ApplicationID: unknownApp}, ev)
		require.NoError(t, err)
		assert.Nil(t, none)
	})
	t.Run("NewDeliveryID", func(t *testing.T) {
		var n *webhook.Notifier
		j, err := n.RunJob(ctx, "ws", "run-1", webhook.Target{URL: "https://run.example/hook"}, ev)
		require.NoError(t, err)
		require.NotNil(t, j)
		assert.NotEmpty(t, delivery(t, j).ID)
	})
}
