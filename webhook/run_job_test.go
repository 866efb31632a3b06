package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestNotifier_RunDeliveries(t *testing.T) {
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
	// delivery returns what o sends, checking that its job and its log
	// row agree.
	delivery := func(t *testing.T, o webhook.Outgoing) webhook.Delivery {
		t.Helper()
		require.Equal(t, webhook.JobKind, o.Job.Kind)
		var d webhook.Delivery
		require.NoError(t, json.Unmarshal(o.Job.Payload, &d))
		assert.Equal(t, d.ID, o.Delivery.ID)
		assert.Equal(t, d.URL, o.Delivery.URL)
		assert.Equal(t, d.ApplicationID, o.Delivery.ApplicationID)
		assert.Equal(t, d.Event.Type, o.Delivery.EventType)
		return d
	}
	// urlDelivery checks that o delivers ev to the run's own URL.
	urlDelivery := func(t *testing.T, o webhook.Outgoing) {
		t.Helper()
		d := delivery(t, o)
		assert.Equal(t, "https://run.example/hook", d.URL)
		assert.Equal(t, deliveryID, d.ID)
		assert.Equal(t, headers, d.Headers)
		assert.Empty(t, d.ApplicationID)
		assert.Equal(t, ev.Type, d.Event.Type)
		assert.JSONEq(t, string(ev.Data), string(d.Event.Data))
		assert.Equal(t, "run-1", o.Job.RefID)
	}
	target := func(appID string) webhook.Target {
		return webhook.Target{URL: "https://run.example/hook", Headers: headers, ApplicationID: appID, DeliveryID: deliveryID}
	}

	t.Run("URLAndApplication", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f)
		ds, err := f.notifier.RunDeliveries(ctx, f.ws.ID, "run-1", target(a.ID), ev)
		require.NoError(t, err)
		require.Len(t, ds, 2, "one delivery each")
		urlDelivery(t, ds[0])
		sub := delivery(t, ds[1])
		assert.Equal(t, "https://app.example/hook", sub.URL)
		assert.Equal(t, a.ID, sub.ApplicationID)
		assert.NotEqual(t, deliveryID, sub.ID)
		assert.Equal(t, "run-1", ds[1].Job.RefID)
	})
	t.Run("ApplicationOnly", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f)
		ds, err := f.notifier.RunDeliveries(ctx, f.ws.ID, "run-1", webhook.Target{ApplicationID: a.ID}, ev)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		d := delivery(t, ds[0])
		assert.Equal(t, "https://app.example/hook", d.URL)
		assert.Equal(t, a.ID, d.ApplicationID)
	})
	t.Run("ApplicationFiltersEventOut", func(t *testing.T) {
		f := newNotifierFixture(t)
		a := newApp(t, f, webhook.EventTaskFailed)
		ds, err := f.notifier.RunDeliveries(ctx, f.ws.ID, "run-1", target(a.ID), ev)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		urlDelivery(t, ds[0])

		none, err := f.notifier.RunDeliveries(ctx, f.ws.ID, "run-1", webhook.Target{ApplicationID: a.ID}, ev)
		require.NoError(t, err)
		assert.Empty(t, none)
	})
	t.Run("UnknownApplication", func(t *testing.T) {
		f := newNotifierFixture(t)
		ds, err := f.notifier.RunDeliveries(ctx, f.ws.ID, "run-1", target(unknownApp), ev)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		urlDelivery(t, ds[0])
	})
	t.Run("NilNotifier", func(t *testing.T) {
		var n *webhook.Notifier
		ds, err := n.RunDeliveries(ctx, "ws", "run-1", target(unknownApp), ev)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		urlDelivery(t, ds[0])

		none, err := n.RunDeliveries(ctx, "ws", "run-1", webhook.Target{ApplicationID: unknownApp}, ev)
		require.NoError(t, err)
		assert.Empty(t, none)
	})
	t.Run("NewDeliveryID", func(t *testing.T) {
		var n *webhook.Notifier
		ds, err := n.RunDeliveries(ctx, "ws", "run-1", webhook.Target{URL: "https://run.example/hook"}, ev)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		assert.NotEmpty(t, delivery(t, ds[0]).ID)
	})
}
