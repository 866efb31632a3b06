package env_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/webhook"
)

func TestService_PublishOutbox(t *testing.T) {
	f := mustFixture(t)
	ctx := context.Background()
	notifier := webhook.NewNotifier(webhook.NotifierOptions{Store: f.db})
	woken := 0
	fail := false
	f.svc = env.NewService(env.Options{Store: f.db, Canvases: f.db, Changes: f.db, Notify: func() { woken++ },
		Event: &env.PublicationEvent{Type: webhook.EventPublicationCreated, Job: func(ws string, pub *env.Publication) (*queue.Job, error) {
			if fail {
				return nil, canvas.Errorf(canvas.EINTERNAL, "the outbox is down")
			}
			return notifier.CanvasEventJob(ws, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
		}}})
	f.mustSubscription(t)
	v1, v2 := f.mustVersion(t, "v1", "one"), f.mustVersion(t, "v2", "two")
	// outboxJobs claims the canvas_event jobs written so far: no worker
	// runs in this test, so each was written by a publish.
	outboxJobs := func(t *testing.T) []*queue.Job {
		t.Helper()
		jobs, err := f.db.ClaimJobs(ctx, "test", []string{webhook.JobKindCanvasEvent}, 10, time.Hour)
		require.NoError(t, err)
		return jobs
	}

	t.Run("OK", func(t *testing.T) {
		pub := f.mustPublish(t, env.Production, v1.ID)
		jobs := outboxJobs(t)
		require.Len(t, jobs, 1, "the job exists as soon as Publish returns")
		assert.Equal(t, pub.PublicationID, jobs[0].RefID)
		assert.Equal(t, f.workspace.ID, jobs[0].WorkspaceID)
		var ce webhook.CanvasEvent
		require.NoError(t, json.Unmarshal(jobs[0].Payload, &ce))
		assert.Equal(t, f.canvas.ID, ce.CanvasID)
		assert.Equal(t, webhook.EventPublicationCreated, ce.Type)
		var data env.Publication
		require.NoError(t, json.Unmarshal(ce.Data, &data))
		assert.Equal(t, pub.PublicationID, data.PublicationID)
		assert.Equal(t, 1, woken)
	})
	t.Run("AlreadyActive", func(t *testing.T) {
		f.mustPublish(t, env.Production, v1.ID)
		assert.Empty(t, outboxJobs(t), "publishing the active version again notifies nothing")
		assert.Equal(t, 1, woken)
	})
	t.Run("OutboxFails", func(t *testing.T) {
		fail = true
		defer func() { fail = false }()
		_, _, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{
			CanvasID: f.canvas.ID, EnvName: env.Production, VersionID: v2.ID})
		assert.Equal(t, canvas.EINTERNAL, canvas.ErrorCode(err))
		page, err := f.svc.History(f.as(canvas.RoleViewer), env.HistoryParams{CanvasID: f.canvas.ID,
			EnvName: env.Production, Limit: env.DefaultLimit})
		require.NoError(t, err)
		assert.Equal(t, 1, page.Total, "no publication without its notification")
		assert.Empty(t, outboxJobs(t))
		assert.Equal(t, 1, woken)
	})
}

// TestService_PromoteVersion promotes versions through canvas updates with
// the environment service as the canvas service's Promoter: each promotion
// is a publication like any other, whose outbox job commits with it.
func TestService_PromoteVersion(t *testing.T) {
	f := mustFixture(t)
	ctx := context.Background()
	notifier := webhook.NewNotifier(webhook.NotifierOptions{Store: f.db})
	f.svc = env.NewService(env.Options{Store: f.db, Canvases: f.db, Changes: f.db, Notify: nil,
		Event: &env.PublicationEvent{Type: webhook.EventPublicationCreated, Job: func(ws string, pub *env.Publication) (*queue.Job, error) {
			return notifier.CanvasEventJob(ws, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
		}}})
	f.mustSubscription(t)
	canvases := canvas.NewService(canvas.Options{Store: f.db, Promoter: f.svc})
	v1 := f.mustVersion(t, "v1", "one")
	outboxJobs := func(t *testing.T) []*queue.Job {
		t.Helper()
		jobs, err := f.db.ClaimJobs(ctx, "test", []string{webhook.JobKindCanvasEvent}, 10, time.Hour)
		require.NoError(t, err)
		return jobs
	}

	promoted, title := true, "Promoted one"
	got, err := canvases.UpdateVersion(f.as(canvas.RoleEditor), v1.ID, canvas.VersionUpdate{Promoted: &promoted, Title: &title})
	require.NoError(t, err)
	assert.True(t, got.Promoted)
	assert.Equal(t, title, got.Title, "the other fields are updated too")
	require.Len(t, outboxJobs(t), 1, "the promotion notifies as a publish does")

	_, err = canvases.UpdateVersion(f.as(canvas.RoleEditor), v1.ID, canvas.VersionUpdate{Promoted: &promoted})
	require.NoError(t, err)
	assert.Empty(t, outboxJobs(t), "promoting the promoted version again publishes nothing")

	_, err = canvases.UpdateVersion(f.as(canvas.RoleViewer), v1.ID, canvas.VersionUpdate{Promoted: &promoted})
	assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))

	withdrawn := false
	got, err = canvases.UpdateVersion(f.as(canvas.RoleEditor), v1.ID, canvas.VersionUpdate{Promoted: &withdrawn})
	require.NoError(t, err)
	assert.False(t, got.Promoted, "withdrawing goes through the store as before")
}

// mustSubscription creates an application of the fixture's canvas whose
// subscription takes every event, so that publishes write their event's
// job.
func (f *fixture) mustSubscription(t testing.TB) {
	t.Helper()
	a := &webhook.Application{WorkspaceID: f.workspace.ID, Name: "hooks", PromptID: &f.canvas.ID,
		EnvironmentName: env.Production, CreatedBy: "user-1",
		Events: webhook.Subscription{Enabled: true, URL: "https://example.com/hook", EventTypes: []string{}}}
	require.NoError(t, f.db.CreateApplication(context.Background(), a, "whsec_c2VjcmV0"))
}
