package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Application creates an application of c (nil: none) with an enabled
// subscription to url and the signing secret secret.
func (f *fixture) Application(c *canvas.Canvas, url, secret string) *webhook.Application {
	f.t.Helper()
	a := &webhook.Application{WorkspaceID: f.ws.ID, Name: "app", EnvironmentName: "production", CreatedBy: "alice",
		Events: webhook.Subscription{Enabled: true, URL: url, Headers: []webhook.Header{{Name: "x-b", Value: "1"}, {Name: "x-a", Value: "2"}},
			EventTypes: []string{}}}
	if c != nil {
		a.PromptID = &c.ID
	}
	require.NoError(f.t, f.s.CreateApplication(f.ctx, a, secret))
	return a
}

func testApplications(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetRoundTrip", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		a := f.Application(c, "https://example.com/hook", "whsec_c2VjcmV0")
		got, err := f.s.GetApplication(f.ctx, f.ws.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, c.ID, *got.PromptID)
		assert.Equal(t, []webhook.Header{{Name: "x-b", Value: "1"}, {Name: "x-a", Value: "2"}}, got.Events.Headers, "headers keep their order")
		assert.True(t, got.Events.HasSecret)
		assert.True(t, got.Events.Enabled)
		assert.Equal(t, "https://example.com/hook", got.Events.URL)
		assert.False(t, got.CreatedAt.IsZero())
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "", "whsec_c2VjcmV0")
		other := f.Workspace("other")
		_, err := f.s.GetApplication(f.ctx, other.ID, a.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.UpdateApplication(f.ctx, other.ID, a.ID, webhook.ApplicationUpdate{})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteApplication(f.ctx, other.ID, a.ID))
		requireCode(t, canvas.ENOTFOUND, f.s.RotateSecret(f.ctx, webhook.RotateSecretParams{WorkspaceID: other.ID,
			ApplicationID: a.ID, Secret: "whsec_bmV3", Overlap: time.Hour}))
	})
	run(t, newStore, "ListByCanvas", func(t *testing.T, f *fixture) {
		c1, c2 := f.Canvas("one", nil, "alice"), f.Canvas("two", nil, "alice")
		a1 := f.Application(c1, "", "whsec_c2VjcmV0")
		a2 := f.Application(c2, "", "whsec_c2VjcmV0")
		all, err := f.s.ListApplications(f.ctx, f.ws.ID, "")
		require.NoError(t, err)
		require.Len(t, all, 2)
		assert.Equal(t, []string{a1.ID, a2.ID}, []string{all[0].ID, all[1].ID})
		of2, err := f.s.ListApplications(f.ctx, f.ws.ID, c2.ID)
		require.NoError(t, err)
		require.Len(t, of2, 1)
		assert.Equal(t, a2.ID, of2[0].ID)
	})
	run(t, newStore, "UpdateEnablingClearsDisabled", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "https://example.com/hook", "whsec_c2VjcmV0")
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, false, false, ""))
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, false, true, "receiver answered 410 Gone"))
		got, err := f.s.GetApplication(f.ctx, f.ws.ID, a.ID)
		require.NoError(t, err)
		assert.False(t, got.Events.Enabled)
		assert.Equal(t, 2, got.Events.ConsecutiveFailures)
		require.NotNil(t, got.Events.DisabledAt)
		assert.Equal(t, "receiver answered 410 Gone", *got.Events.DisabledReason)

		on, url := true, "https://example.org/new"
		got, err = f.s.UpdateApplication(f.ctx, f.ws.ID, a.ID, webhook.ApplicationUpdate{Enabled: &on, URL: &url})
		require.NoError(t, err)
		assert.True(t, got.Events.Enabled)
		assert.Zero(t, got.Events.ConsecutiveFailures)
		assert.Nil(t, got.Events.DisabledAt)
		assert.Nil(t, got.Events.DisabledReason)
		assert.Equal(t, url, got.Events.URL)
		assert.Len(t, got.Events.Headers, 2, "headers not given are kept")
	})
	run(t, newStore, "SuccessResetsFailures", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "https://example.com/hook", "whsec_c2VjcmV0")
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, false, false, ""))
		target, err := f.s.SubscriptionTarget(f.ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, 1, target.ConsecutiveFailures)
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, true, false, ""))
		target, err = f.s.SubscriptionTarget(f.ctx, a.ID)
		require.NoError(t, err)
		assert.Zero(t, target.ConsecutiveFailures)
		assert.True(t, target.Enabled)
		requireCode(t, canvas.ENOTFOUND, f.s.RecordSubscriptionOutcome(f.ctx, "nope", true, false, ""))
	})
	run(t, newStore, "RotateKeepsPreviousUntilOverlap", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "https://example.com/hook", "whsec_b2xk")
		require.NoError(t, f.s.RotateSecret(f.ctx, webhook.RotateSecretParams{WorkspaceID: f.ws.ID,
			ApplicationID: a.ID, Secret: "whsec_bmV3", Overlap: time.Hour}))
		target, err := f.s.SubscriptionTarget(f.ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, target.Secrets, 2)
		assert.Equal(t, "whsec_bmV3", target.Secrets[0].Value, "newest first")
		assert.Nil(t, target.Secrets[0].ExpiresAt)
		assert.Equal(t, "whsec_b2xk", target.Secrets[1].Value)
		require.NotNil(t, target.Secrets[1].ExpiresAt)

		// A rotation with no overlap retires every earlier secret at once.
		require.NoError(t, f.s.RotateSecret(f.ctx, webhook.RotateSecretParams{WorkspaceID: f.ws.ID,
			ApplicationID: a.ID, Secret: "whsec_bmV3ZXI=", Overlap: 0}))
		target, err = f.s.SubscriptionTarget(f.ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, target.Secrets, 1)
		assert.Equal(t, "whsec_bmV3ZXI=", target.Secrets[0].Value)
	})
	run(t, newStore, "DeleteRemovesSubscription", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "https://example.com/hook", "whsec_c2VjcmV0")
		require.NoError(t, f.s.DeleteApplication(f.ctx, f.ws.ID, a.ID))
		_, err := f.s.GetApplication(f.ctx, f.ws.ID, a.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.SubscriptionTarget(f.ctx, a.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteApplication(f.ctx, f.ws.ID, a.ID))
	})
}
