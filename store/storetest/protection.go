package storetest

import (
	"encoding/json"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Protect protects the environment envName of c with approvals required
// approvals and returns it.
func (f *fixture) Protect(c *canvas.Canvas, envName string, approvals int, x *env.RequiredExperiment) *env.Environment {
	f.t.Helper()
	e, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID, Name: envName})
	require.NoError(f.t, err)
	e, err = f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: c.WorkspaceID, ID: e.ID, Protected: true,
		RequiredApprovals: approvals, RequiredExperiment: x})
	require.NoError(f.t, err)
	return e
}

func testProtection(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "PolicyRoundTrip", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		tag := f.TagOf(c, "smoke")
		e := f.Protect(c, env.Production, 2, &env.RequiredExperiment{TagIDs: []string{tag.ID}, MinPassRate: 0.9})
		assert.True(t, e.Protected)
		assert.Equal(t, 2, e.RequiredApprovals)
		assert.Equal(t, &env.RequiredExperiment{TagIDs: []string{tag.ID}, MinPassRate: 0.9}, e.RequiredExperiment)
		got, err := f.s.GetEnvironment(f.ctx, f.ws.ID, e.ID)
		require.NoError(t, err)
		assert.Equal(t, e, got)
		list, err := f.s.ListEnvironments(f.ctx, f.ws.ID, c.ID)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.True(t, list[0].Protected)

		off, err := f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: f.ws.ID, ID: e.ID, RequiredApprovals: 3,
			RequiredExperiment: &env.RequiredExperiment{}})
		require.NoError(t, err)
		assert.False(t, off.Protected)
		assert.Zero(t, off.RequiredApprovals, "unprotecting clears the policy")
		assert.Nil(t, off.RequiredExperiment)
	})
	run(t, newStore, "PolicyRefusesForeignTagsAndWorkspaces", func(t *testing.T, f *fixture) {
		c, other := f.Canvas("c", nil, "alice"), f.Canvas("d", nil, "alice")
		own, foreign := f.TagOf(c, "mine"), f.TagOf(other, "theirs")
		e := f.Env(c, "staging")
		_, err := f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: f.ws.ID, ID: e.ID, Protected: true, RequiredApprovals: 1,
			RequiredExperiment: &env.RequiredExperiment{TagIDs: []string{own.ID, foreign.ID}}})
		requireCode(t, canvas.EINVALID, err)
		assert.Equal(t, []canvas.Detail{{Path: "/json/requiredExperiment/tagIds/1", Message: "is not a tag of the canvas"}},
			canvas.ErrorDetails(err))
		_, err = f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: f.Workspace("other").ID, ID: e.ID, Protected: true,
			RequiredApprovals: 1})
		requireCode(t, canvas.ENOTFOUND, err)
		got, err := f.s.GetEnvironment(f.ctx, f.ws.ID, e.ID)
		require.NoError(t, err)
		assert.False(t, got.Protected, "a refused policy changes nothing")
	})
	run(t, newStore, "ProtectedRefusesDirectPublishes", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		staging := f.Env(c, "staging")
		f.Protect(c, env.Production, 1, nil)
		f.Protect(c, "staging", 1, nil)
		for _, name := range []string{env.Production, "staging"} {
			_, _, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: name,
				VersionID: v2.ID, By: "mallory"})
			requireCode(t, canvas.EAPPROVALREQUIRED, err)
			assert.Contains(t, canvas.ErrorMessage(err), "POST /publication-requests")
		}
		again, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v1.ID, By: "mallory"})
		require.NoError(t, err, "publishing what it serves changes nothing and needs no approval")
		assert.False(t, created)
		assert.Equal(t, v1.ID, again.VersionID)
		assert.Empty(t, f.History(staging))

		// Promotion and unpromotion are publishes of production.
		_, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			Update: canvas.VersionUpdate{Promoted: ptr(true)}, By: "mallory"})
		requireCode(t, canvas.EAPPROVALREQUIRED, err)
		_, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v1.ID,
			Update: canvas.VersionUpdate{Promoted: ptr(false)}, By: "mallory"})
		requireCode(t, canvas.EAPPROVALREQUIRED, err)
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, Name: env.Production})
		require.NoError(t, err)
		assert.Equal(t, &v1.ID, prod.ActiveVersionID)
		assert.Len(t, f.History(prod), 1, "nothing was published")

		// Unprotected, the same publish goes through.
		_, err = f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: f.ws.ID, ID: prod.ID})
		require.NoError(t, err)
		f.Publish(v2, env.Production)
	})
	run(t, newStore, "ServedVersionIsNotEdited", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		served, other := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(served, env.Production)
		f.Protect(c, env.Production, 1, nil)
		msgs, err := f.s.ListMessages(f.ctx, f.ws.ID, served.ID)
		require.NoError(t, err)
		require.NotEmpty(t, msgs)
		// The message deletion comes last: it leaves the other version
		// without a message.
		edits := []struct {
			name string
			edit func(v *canvas.Version, m *canvas.Message) error
		}{
			{"Content", func(v *canvas.Version, _ *canvas.Message) error {
				_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
					Update: canvas.VersionUpdate{Content: ptr("changed")}, By: "mallory"})
				return err
			}},
			{"Configuration", func(v *canvas.Version, _ *canvas.Message) error {
				_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v.ID,
					Update: canvas.VersionUpdate{ConfigurationPatch: json.RawMessage(`{"temperature":1}`)}, By: "mallory"})
				return err
			}},
			{"CreateMessage", func(v *canvas.Version, _ *canvas.Message) error {
				return f.s.CreateMessage(f.ctx, f.ws.ID, &canvas.Message{PromptVersionID: v.ID, Role: canvas.RoleUser,
					Content: "more", Index: 5, CreatedBy: "mallory", UpdatedBy: "mallory"})
			}},
			{"UpdateMessage", func(_ *canvas.Version, m *canvas.Message) error {
				_, err := f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: m.ID,
					Update: canvas.MessageUpdate{Content: ptr("changed")}, By: "mallory"})
				return err
			}},
			{"DeleteMessage", func(_ *canvas.Version, m *canvas.Message) error {
				return f.s.DeleteMessage(f.ctx, f.ws.ID, m.ID)
			}},
		}
		for _, e := range edits {
			requireCode(t, canvas.EAPPROVALREQUIRED, e.edit(served, msgs[0]))
			otherMsgs, err := f.s.ListMessages(f.ctx, f.ws.ID, other.ID)
			require.NoError(t, err)
			require.NoError(t, e.edit(other, otherMsgs[0]), "%s of a version no protected environment serves", e.name)
		}
		after, err := f.s.ListMessages(f.ctx, f.ws.ID, served.ID)
		require.NoError(t, err)
		assert.Equal(t, msgs, after, "the served version is as it was")
		_, err = f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: served.ID,
			Update: canvas.VersionUpdate{Title: ptr("renamed")}, By: "alice"})
		require.NoError(t, err, "a title is not what an environment serves")
	})
	run(t, newStore, "ProtectedEnvironmentIsNotDeleted", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		e := f.Env(c, "staging")
		f.Protect(c, "staging", 1, nil)
		requireCode(t, canvas.ECONFLICT, f.s.DeleteEnvironment(f.ctx, f.ws.ID, e.ID))
		_, err := f.s.SetPolicy(f.ctx, env.PolicyParams{WorkspaceID: f.ws.ID, ID: e.ID})
		require.NoError(t, err)
		require.NoError(t, f.s.DeleteEnvironment(f.ctx, f.ws.ID, e.ID))
	})
}
