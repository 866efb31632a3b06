package env_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckSplit(t *testing.T) {
	a, b := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	for name, tc := range map[string]struct {
		split []env.SplitEntry
		paths []string
	}{
		"OK":        {[]env.SplitEntry{{VersionID: a, Weight: 70}, {VersionID: b, Weight: 30}}, nil},
		"Empty":     {nil, []string{"/json/split"}},
		"TooMany":   {[]env.SplitEntry{{VersionID: "1", Weight: 20}, {VersionID: "2", Weight: 20}, {VersionID: "3", Weight: 20}, {VersionID: "4", Weight: 20}, {VersionID: "5", Weight: 10}, {VersionID: "6", Weight: 10}}, []string{"/json/split"}},
		"Weight":    {[]env.SplitEntry{{VersionID: a, Weight: 0}, {VersionID: b, Weight: 100}}, []string{"/json/split/0/weight", "/json/split/1/weight"}},
		"Sum":       {[]env.SplitEntry{{VersionID: a, Weight: 50}, {VersionID: b, Weight: 49}}, []string{"/json/split"}},
		"Repeated":  {[]env.SplitEntry{{VersionID: a, Weight: 50}, {VersionID: a, Weight: 50}}, []string{"/json/split/1/versionId"}},
		"FiveParts": {[]env.SplitEntry{{VersionID: "1", Weight: 20}, {VersionID: "2", Weight: 20}, {VersionID: "3", Weight: 20}, {VersionID: "4", Weight: 20}, {VersionID: "5", Weight: 20}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			err := env.CheckSplit(tc.split)
			if tc.paths == nil {
				require.NoError(t, err)
				return
			}
			require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
			var paths []string
			for _, d := range canvas.ErrorDetails(err) {
				paths = append(paths, d.Path)
			}
			assert.ElementsMatch(t, tc.paths, paths)
		})
	}
}

// TestService_AssignVersion publishes a 70/30 split and reads it as
// 10,000 keys: the shares are within 2 points of the weights, a key reads
// the same version every time, and a new publication assigns anew.
func TestService_AssignVersion(t *testing.T) {
	f := mustFixture(t)
	v1, v2 := f.mustVersion(t, "one", "one"), f.mustVersion(t, "two", "two")
	pub, created, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{CanvasID: f.canvas.ID,
		EnvName: env.Production, Split: []env.SplitEntry{{VersionID: v1.ID, Weight: 70}, {VersionID: v2.ID, Weight: 30}}})
	require.NoError(t, err)
	require.True(t, created)
	assert.Equal(t, v1.ID, pub.VersionID)

	ctx := f.as(canvas.RoleViewer)
	const keys = 10_000
	counts := map[string]int{}
	first := make([]string, keys)
	for i := range keys {
		a, err := f.svc.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
			AssignmentKey: fmt.Sprintf("user-%d", i)})
		require.NoError(t, err)
		require.NotNil(t, a.Variant)
		assert.Equal(t, pub.PublicationID, a.PublicationID)
		assert.Equal(t, []string{v1.ID, v2.ID}[*a.Variant], a.Version.ID)
		counts[a.Version.ID]++
		first[i] = a.Version.ID
	}
	share := float64(counts[v1.ID]) / keys
	assert.Less(t, math.Abs(share-0.7), 0.02, "measured share of the 70 %% version: %.4f", share)
	for i := 0; i < keys; i += 97 {
		v, err := f.svc.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
			AssignmentKey: fmt.Sprintf("user-%d", i)})
		require.NoError(t, err)
		require.Equal(t, first[i], v.ID, "key %d keeps its version", i)
	}

	// Without a key each read draws: both versions come up.
	drawn := map[string]bool{}
	for range 200 {
		v, err := f.svc.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production})
		require.NoError(t, err)
		drawn[v.ID] = true
	}
	assert.Len(t, drawn, 2)

	// A stable read serves the first entry with a tag of the whole split.
	stable, err := f.svc.ActiveVersionServed(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production, Stable: true})
	require.NoError(t, err)
	assert.Contains(t, string(stable.JSON), v1.ID)
	keyed, err := f.svc.ActiveVersionServed(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
		AssignmentKey: "user-0"})
	require.NoError(t, err)
	assert.NotEqual(t, stable.ETag, keyed.ETag)

	// A new publication (new weights) assigns the keys anew.
	pub2, _, err := f.svc.Publish(f.as(canvas.RoleEditor), env.PublishVersionParams{CanvasID: f.canvas.ID,
		EnvName: env.Production, Split: []env.SplitEntry{{VersionID: v1.ID, Weight: 50}, {VersionID: v2.ID, Weight: 50}}})
	require.NoError(t, err)
	moved := 0
	for i := range 1000 {
		a, err := f.svc.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
			AssignmentKey: fmt.Sprintf("user-%d", i)})
		require.NoError(t, err)
		assert.Equal(t, pub2.PublicationID, a.PublicationID)
		if a.Version.ID != first[i] {
			moved++
		}
	}
	assert.Positive(t, moved)

	// Ending the split: one version, no variant.
	f.mustPublish(t, env.Production, v2.ID)
	a, err := f.svc.AssignVersion(ctx, env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production, AssignmentKey: "user-0"})
	require.NoError(t, err)
	assert.Equal(t, v2.ID, a.Version.ID)
	assert.Nil(t, a.Variant)
}

func TestService_PublishSplitInvalid(t *testing.T) {
	f := mustFixture(t)
	v1, v2 := f.mustVersion(t, "one", "one"), f.mustVersion(t, "two", "two")
	ctx := f.as(canvas.RoleEditor)
	_, _, err := f.svc.Publish(ctx, env.PublishVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
		VersionID: v1.ID, Split: []env.SplitEntry{{VersionID: v1.ID, Weight: 50}, {VersionID: v2.ID, Weight: 50}}})
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "both")
	_, _, err = f.svc.Publish(ctx, env.PublishVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production})
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "neither")
	_, _, err = f.svc.Publish(f.as(canvas.RoleViewer), env.PublishVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production,
		Split: []env.SplitEntry{{VersionID: v1.ID, Weight: 50}, {VersionID: v2.ID, Weight: 50}}})
	assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err), "a viewer")
	_, err = f.svc.ActiveVersion(f.as(canvas.RoleViewer), env.ActiveVersionParams{CanvasID: f.canvas.ID,
		EnvName: env.Production, AssignmentKey: string(make([]byte, env.MaxAssignment+1))})
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "a key too long")
}
