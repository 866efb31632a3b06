package clienttest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestClient_Split publishes a split through the client, runs it with
// assignment keys, gives feedback and reads the split's stats.
func TestClient_Split(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, c, 2)
	v1, v2 := f.Versions[0].ID, f.Versions[1].ID
	pub, err := c.Publish(ctx, client.PublishParams{CanvasID: f.Canvas.ID, EnvName: wire.Production,
		Split: []wire.SplitEntry{{VersionID: v1, Weight: 70}, {VersionID: v2, Weight: 30}}})
	require.NoError(t, err)
	assert.Equal(t, v1, pub.VersionID)
	assert.Equal(t, []wire.SplitEntry{{VersionID: v1, Weight: 70}, {VersionID: v2, Weight: 30}}, pub.Split)

	_, err = c.Publish(ctx, client.PublishParams{CanvasID: f.Canvas.ID, EnvName: wire.Production,
		Split: []wire.SplitEntry{{VersionID: v1, Weight: 70}, {VersionID: v2, Weight: 20}}})
	assert.Equal(t, 422, client.StatusCode(err), "weights that do not sum to 100")

	runs := map[int][]string{}
	for i := 0; len(runs[0]) == 0 || len(runs[1]) == 0; i++ {
		require.Less(t, i, 100)
		key := fmt.Sprintf("user-%d", i)
		read, err := c.AssignedVersion(ctx, f.Canvas.ID, wire.Production, key)
		require.NoError(t, err)
		res, err := c.Complete(ctx, wire.CompletionRequest{CanvasID: f.Canvas.ID, AssignmentKey: key,
			Variables: map[string]any{"name": "Ada"}})
		require.NoError(t, err)
		assert.Equal(t, read.ID, res.VersionID, "the read and the run of one key get one version")
		run, err := c.GetCompletion(ctx, res.ID)
		require.NoError(t, err)
		require.NotNil(t, run.Variant)
		assert.Equal(t, pub.PublicationID, run.PublicationID)
		runs[*run.Variant] = append(runs[*run.Variant], run.ID)
	}

	fb, err := c.SetFeedback(ctx, runs[1][0], wire.FeedbackRequest{Score: 0.8, Comment: ptr("good")})
	require.NoError(t, err)
	assert.Equal(t, 0.8, fb.Score)
	fb, err = c.SetFeedback(ctx, runs[1][0], wire.FeedbackRequest{Score: 0.6})
	require.NoError(t, err)
	assert.Equal(t, 0.6, fb.Score)
	run, err := c.GetCompletion(ctx, runs[1][0])
	require.NoError(t, err)
	require.NotNil(t, run.Feedback)
	assert.Equal(t, 0.6, run.Feedback.Score)

	stats, err := c.SplitStats(ctx, client.SplitStatsParams{CanvasID: f.Canvas.ID, EnvName: wire.Production})
	require.NoError(t, err)
	assert.Equal(t, pub.PublicationID, stats.PublicationID)
	require.Len(t, stats.Variants, 2)
	assert.Equal(t, len(runs[0]), stats.Variants[0].Runs)
	assert.Equal(t, len(runs[1]), stats.Variants[1].Runs)
	assert.Equal(t, 1, stats.Variants[1].FeedbackCount)
	require.NotNil(t, stats.Variants[1].FeedbackMean)
	assert.InDelta(t, 0.6, *stats.Variants[1].FeedbackMean, 1e-9)

	// A cache with an assignment key serves the key's version.
	p := mustPrompts(t, c, client.PromptsOptions{AssignmentKey: "user-0"})
	cached, err := p.Get(ctx, f.Canvas.ID, wire.Production)
	require.NoError(t, err)
	want, err := c.AssignedVersion(ctx, f.Canvas.ID, wire.Production, "user-0")
	require.NoError(t, err)
	assert.Equal(t, want.ID, cached.Version.ID)
}
