package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RequestSplit makes a pending request by alice to publish a split of c's
// versions to envName.
func (f *fixture) RequestSplit(c *canvas.Canvas, envName string, split ...env.SplitEntry) (*env.PublicationRequest, error) {
	f.t.Helper()
	return f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		EnvName: envName, VersionID: split[0].VersionID, Split: split, Comment: "a/b", By: "alice"})
}

func testRequestSplits(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "TwoApprovalsPublishTheSplit", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		f.Publish(v1, env.Production)
		prod := f.Protect(c, env.Production, 2, nil)
		split := []env.SplitEntry{{VersionID: v2.ID, Weight: 70}, {VersionID: v3.ID, Weight: 30}}
		r, err := f.RequestSplit(c, env.Production, split...)
		require.NoError(t, err)
		assert.Equal(t, v2.ID, r.VersionID, "the request's version is the first entry's")
		assert.Equal(t, split, r.Split)
		assert.Equal(t, &v1.ID, r.BaseVersionID)
		require.NotNil(t, r.DiffPath)
		assert.Equal(t, "/prompt-version/"+v2.ID+"/diff?against="+v1.ID, *r.DiffPath, "the diff is the first entry's")
		assert.False(t, r.VersionChanged)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r, got)
		page, _, err := f.s.ListRequests(f.ctx, env.RequestQuery{WorkspaceID: f.ws.ID, CanvasID: c.ID, UserID: "alice", Limit: 10})
		require.NoError(t, err)
		require.Len(t, page, 1)
		assert.Equal(t, split, page[0].Split)

		_, pub, err := f.Decide(r, env.DecisionApprove, "bob")
		require.NoError(t, err)
		assert.Nil(t, pub, "one approval of two publishes nothing")
		got, pub, err = f.Decide(r, env.DecisionApprove, "carol")
		require.NoError(t, err)
		require.NotNil(t, pub)
		assert.Equal(t, env.RequestPublished, got.Status)
		assert.Equal(t, v2.ID, pub.VersionID)
		assert.Equal(t, split, pub.Split)
		assert.Equal(t, "alice", pub.PublishedBy)
		assert.Equal(t, &pub.PublicationID, got.PublicationID)
		e, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, Name: env.Production})
		require.NoError(t, err)
		assert.Equal(t, split, e.Split, "production serves the split")
		assert.Equal(t, pub.PublicationID, e.ActivePublicationID)
		hist := f.History(prod)
		require.Len(t, hist, 2)
		assert.Equal(t, split, hist[0].Split)

		_, err = f.RequestSplit(c, env.Production, split...)
		requireCode(t, canvas.ECONFLICT, err) // production serves it already
		_, err = f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v2.ID, Weight: 50}, env.SplitEntry{VersionID: v3.ID, Weight: 50})
		require.NoError(t, err, "another weighing is another split")
		one := f.Request(v2, env.Production)
		assert.Nil(t, one.Split, "one version ends the split")
	})
	run(t, newStore, "EveryVersionOfTheSplitMustBeLive", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		other := f.Version(f.Canvas("other", nil, "alice"), "elsewhere")
		gone := f.Version(c, "gone")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: gone.ID, By: "alice"}))
		_, err := f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 40},
			env.SplitEntry{VersionID: other.ID, Weight: 30}, env.SplitEntry{VersionID: v2.ID, Weight: 20},
			env.SplitEntry{VersionID: gone.ID, Weight: 10})
		requireCode(t, canvas.EINVALID, err)
		var ce *canvas.Error
		require.ErrorAs(t, err, &ce)
		var paths []string
		for _, d := range ce.Details {
			paths = append(paths, d.Path)
		}
		assert.Equal(t, []string{"/json/split/1/versionId", "/json/split/3/versionId"}, paths)
	})
	run(t, newStore, "AnEditOfAnyVersionOfTheSplitIsNotApproved", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		f.Publish(v1, env.Production)
		prod := f.Protect(c, env.Production, 1, nil)
		r, err := f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v2.ID, Weight: 70},
			env.SplitEntry{VersionID: v3.ID, Weight: 30})
		require.NoError(t, err)
		msgs, err := f.s.ListMessages(f.ctx, f.ws.ID, v3.ID)
		require.NoError(t, err)
		_, err = f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: msgs[0].ID,
			Update: canvas.MessageUpdate{Content: ptr("the second entry, changed after the request")}, By: "mallory"})
		require.NoError(t, err)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.True(t, got.VersionChanged, "an edit of the second entry")
		_, _, err = f.Decide(r, env.DecisionApprove, "bob")
		requireCode(t, canvas.ECONFLICT, err)
		assert.Contains(t, err.Error(), v3.ID)
		got, err = f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Empty(t, got.Approvals)
		assert.Len(t, f.History(prod), 1, "nothing was published")
	})
	run(t, newStore, "ADeletedVersionOfTheSplitIsNotApproved", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		r, err := f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 50},
			env.SplitEntry{VersionID: v2.ID, Weight: 50})
		require.NoError(t, err)
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID, By: "alice"}))
		_, _, err = f.Decide(r, env.DecisionApprove, "bob")
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "TheGateHoldsForEveryVersionOfTheSplit", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		f.Publish(v1, env.Production)
		smoke := f.TagOf(c, "smoke")
		f.Protect(c, env.Production, 1, &env.RequiredExperiment{TagIDs: []string{smoke.ID}, MinPassRate: 0.75})
		r, err := f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v2.ID, Weight: 70},
			env.SplitEntry{VersionID: v3.ID, Weight: 30})
		require.NoError(t, err)
		refused := func(why string) {
			t.Helper()
			_, _, err := f.Decide(r, env.DecisionApprove, "bob")
			requireCode(t, canvas.ECONFLICT, err)
			got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
			require.NoError(t, err)
			assert.Empty(t, got.Approvals, why)
		}
		f.CompletedExperiment(v2, []string{smoke.ID}, true, true, true, true)
		refused("the first entry passed, the second has no experiment")
		f.CompletedExperiment(v3, []string{smoke.ID}, true, false, false, false)
		refused("the second entry's pass rate is 0.25")
		f.CompletedExperiment(v3, []string{smoke.ID}, true, true, true, false)
		got, pub, err := f.Decide(r, env.DecisionApprove, "bob")
		require.NoError(t, err, "every version of the split passed")
		require.NotNil(t, pub)
		assert.Equal(t, env.RequestPublished, got.Status)
		assert.Len(t, pub.Split, 2)
	})
}
