package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PublishSplit publishes a split of versions with weights to envName.
func (f *fixture) PublishSplit(envName string, entries ...env.SplitEntry) (*env.Publication, bool) {
	f.t.Helper()
	v, err := f.s.GetVersion(f.ctx, f.ws.ID, entries[0].VersionID)
	require.NoError(f.t, err)
	pub, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: v.PromptID,
		EnvName: envName, Split: entries, By: "alice"})
	require.NoError(f.t, err)
	return pub, created
}

// ServedRun stores a completed sync run of v that publication pub served
// as variant (nil: no variant), with latency ms, cost and status.
func (f *fixture) ServedRun(v *canvas.Version, pub *env.Publication, variant *int, status string, ms int64, cost float64) *completion.Run {
	f.t.Helper()
	r := f.Run(v)
	r.Async, r.WebhookURL, r.ForwardHeaders = false, "", nil
	r.Status, r.LatencyMs, r.PublicationID, r.Variant = status, ms, pub.PublicationID, variant
	r.Cost = &model.Cost{Total: cost, Currency: model.Currency}
	require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
	return r
}

func testSplits(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "PublishSplit", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		split := []env.SplitEntry{{VersionID: v2.ID, Weight: 70}, {VersionID: v1.ID, Weight: 30}}
		pub, created := f.PublishSplit(env.Production, split...)
		assert.True(t, created)
		assert.Equal(t, v2.ID, pub.VersionID, "the publication's version is the first entry's")
		assert.Equal(t, split, pub.Split)

		e, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, Name: env.Production})
		require.NoError(t, err)
		assert.Equal(t, &v2.ID, e.ActiveVersionID)
		assert.Equal(t, pub.PublicationID, e.ActivePublicationID)
		assert.Equal(t, split, e.Split)

		again, created := f.PublishSplit(env.Production, split...)
		assert.False(t, created, "the same split again changes nothing")
		assert.Equal(t, pub.PublicationID, again.PublicationID)
		assert.Equal(t, split, again.Split)

		reweighed, created := f.PublishSplit(env.Production, env.SplitEntry{VersionID: v2.ID, Weight: 50},
			env.SplitEntry{VersionID: v1.ID, Weight: 50})
		assert.True(t, created, "new weights are a new publication")

		// Ending a split is publishing one version, even the split's first.
		single, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v2.ID, By: "alice"})
		require.NoError(t, err)
		assert.True(t, created)
		assert.Nil(t, single.Split)

		hist := f.History(e)
		require.Len(t, hist, 4)
		assert.Nil(t, hist[0].Split)
		assert.Equal(t, []env.SplitEntry{{VersionID: v2.ID, Weight: 50}, {VersionID: v1.ID, Weight: 50}}, hist[1].Split)
		assert.Equal(t, reweighed.PublicationID, hist[1].PublicationID)
		assert.Equal(t, split, hist[2].Split, "history records splits")
		assert.Nil(t, hist[3].Split)
		got, err := f.s.GetPublication(f.ctx, f.ws.ID, e.ID, pub.PublicationID)
		require.NoError(t, err)
		assert.Equal(t, split, got.Split)
		assert.False(t, got.IsActive)
	})
	run(t, newStore, "PublishSplitInvalid", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		other := f.Version(f.Canvas("other", nil, "alice"), "other")
		gone := f.Version(c, "gone")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: gone.ID, By: "alice"}))
		for name, tc := range map[string]struct {
			split []env.SplitEntry
			paths []string
		}{
			"OneEntry":    {[]env.SplitEntry{{VersionID: v1.ID, Weight: 100}}, []string{"/json/split", "/json/split/0/weight"}},
			"Sum":         {[]env.SplitEntry{{VersionID: v1.ID, Weight: 60}, {VersionID: v2.ID, Weight: 30}}, []string{"/json/split"}},
			"Repeated":    {[]env.SplitEntry{{VersionID: v1.ID, Weight: 50}, {VersionID: v1.ID, Weight: 50}}, []string{"/json/split/1/versionId"}},
			"OtherCanvas": {[]env.SplitEntry{{VersionID: other.ID, Weight: 50}, {VersionID: v1.ID, Weight: 50}}, []string{"/json/split/0/versionId"}},
			"Deleted":     {[]env.SplitEntry{{VersionID: v1.ID, Weight: 50}, {VersionID: gone.ID, Weight: 50}}, []string{"/json/split/1/versionId"}},
		} {
			_, _, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
				EnvName: env.Production, Split: tc.split, By: "alice"})
			requireCode(t, canvas.EINVALID, err)
			var paths []string
			for _, d := range canvas.ErrorDetails(err) {
				paths = append(paths, d.Path)
			}
			assert.ElementsMatch(t, tc.paths, paths, name)
		}
		e, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, Name: env.Production})
		require.NoError(t, err)
		assert.Nil(t, e.ActiveVersionID, "nothing was published")
	})
	run(t, newStore, "SplitVersionNotDeletable", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.PublishSplit(env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 50}, env.SplitEntry{VersionID: v2.ID, Weight: 50})
		err := f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID, By: "alice"})
		requireCode(t, canvas.ECONFLICT, err)
		f.Publish(v1, env.Production)
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID, By: "alice"}),
			"once the split ended")
	})
	run(t, newStore, "Feedback", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		none, err := f.s.GetFeedback(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Nil(t, none)

		first, err := f.s.SetFeedback(f.ctx, completion.FeedbackParams{WorkspaceID: f.ws.ID, RunID: r.ID, Score: 0.25,
			Comment: ptr("meh"), By: "user-1"})
		require.NoError(t, err)
		assert.Equal(t, 0.25, first.Score)
		assert.Equal(t, ptr("meh"), first.Comment)
		second, err := f.s.SetFeedback(f.ctx, completion.FeedbackParams{WorkspaceID: f.ws.ID, RunID: r.ID, Score: 1,
			By: "user-2"})
		require.NoError(t, err)
		assert.Equal(t, 1.0, second.Score)
		assert.Nil(t, second.Comment)
		assert.Equal(t, "user-1", second.CreatedBy, "the creator stays")
		assert.True(t, second.CreatedAt.Equal(first.CreatedAt))
		assert.False(t, second.UpdatedAt.Before(first.UpdatedAt))
		got, err := f.s.GetFeedback(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, second.Score, got.Score)
		assert.Equal(t, r.ID, got.RunID)

		other := f.Workspace("other")
		_, err = f.s.SetFeedback(f.ctx, completion.FeedbackParams{WorkspaceID: other.ID, RunID: r.ID, Score: 1, By: "x"})
		requireCode(t, canvas.ENOTFOUND, err)
		none, err = f.s.GetFeedback(f.ctx, other.ID, r.ID)
		require.NoError(t, err)
		assert.Nil(t, none, "another workspace's")
	})
	run(t, newStore, "SplitStats", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", f.Project("p"), "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		pub, _ := f.PublishSplit(env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 70}, env.SplitEntry{VersionID: v2.ID, Weight: 30})
		zero, one := ptr(0), ptr(1)
		// Variant 0: latencies 10..100 (ten completed runs), one failed.
		var rated []*completion.Run
		for i := range 10 {
			rated = append(rated, f.ServedRun(v1, pub, zero, completion.StatusCompleted, int64(10*(i+1)), 0.5))
		}
		f.ServedRun(v1, pub, zero, completion.StatusFailed, 1, 0.25)
		// Variant 1: one completed run.
		r1 := f.ServedRun(v2, pub, one, completion.StatusCompleted, 42, 2)
		// Runs of another publication and of no publication do not count.
		other := f.Publish(v2, "production")
		f.ServedRun(v2, other, nil, completion.StatusCompleted, 7, 9)
		for i, score := range []float64{1, 0.5} {
			_, err := f.s.SetFeedback(f.ctx, completion.FeedbackParams{WorkspaceID: f.ws.ID, RunID: rated[i].ID, Score: score, By: "u"})
			require.NoError(t, err)
		}
		_, err := f.s.SetFeedback(f.ctx, completion.FeedbackParams{WorkspaceID: f.ws.ID, RunID: r1.ID, Score: 0, By: "u"})
		require.NoError(t, err)

		stats, err := f.s.SplitStats(f.ctx, f.ws.ID, pub.PublicationID, 2)
		require.NoError(t, err)
		require.Len(t, stats, 2)
		s0, s1 := stats[0], stats[1]
		assert.Equal(t, 0, s0.Variant)
		assert.Equal(t, 11, s0.Runs)
		assert.Equal(t, 1, s0.Errors)
		assert.Equal(t, ptr(int64(50)), s0.LatencyP50Ms, "nearest rank of 10 completed runs")
		assert.Equal(t, ptr(int64(100)), s0.LatencyP95Ms)
		assert.InDelta(t, 5.25, s0.Cost, 1e-9)
		assert.Equal(t, model.Currency, s0.Currency)
		require.NotNil(t, s0.FeedbackMean)
		assert.InDelta(t, 0.75, *s0.FeedbackMean, 1e-9)
		assert.Equal(t, 2, s0.FeedbackCount)
		assert.False(t, s0.Truncated)
		assert.Equal(t, 1, s1.Variant)
		assert.Equal(t, 1, s1.Runs)
		assert.Equal(t, 0, s1.Errors)
		assert.Equal(t, ptr(int64(42)), s1.LatencyP50Ms)
		assert.Equal(t, ptr(int64(42)), s1.LatencyP95Ms)
		assert.InDelta(t, 2, s1.Cost, 1e-9)
		require.NotNil(t, s1.FeedbackMean)
		assert.InDelta(t, 0, *s1.FeedbackMean, 1e-9)
		assert.Equal(t, 1, s1.FeedbackCount)

		single, err := f.s.SplitStats(f.ctx, f.ws.ID, other.PublicationID, 1)
		require.NoError(t, err)
		require.Len(t, single, 1)
		assert.Equal(t, 1, single[0].Runs, "a publication of one version: its runs have no variant")
		assert.InDelta(t, 9, single[0].Cost, 1e-9)
		assert.Nil(t, single[0].FeedbackMean)

		ws2 := f.Workspace("other")
		empty, err := f.s.SplitStats(f.ctx, ws2.ID, pub.PublicationID, 2)
		require.NoError(t, err)
		assert.Equal(t, 0, empty[0].Runs+empty[1].Runs, "another workspace sees no runs")
		assert.Nil(t, empty[0].LatencyP50Ms)
	})
}
