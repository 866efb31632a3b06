package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/review"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SampledCanvas creates a canvas of project whose inferencesPercentage is
// pct, and a version of it.
func (f *fixture) SampledCanvas(pct string, project *canvas.Project) *canvas.Version {
	f.t.Helper()
	c := &canvas.Canvas{Title: "sampled", WorkspaceID: f.ws.ID, InferencesPercentage: pct,
		LayoutVersion: canvas.LayoutV2, CreatedBy: "alice"}
	if project != nil {
		c.ProjectID = &project.ID
	}
	require.NoError(f.t, f.s.CreateCanvas(f.ctx, c))
	return f.Version(c, "hello")
}

// SyncRun stores a completed sync run of v drawn with s (nil: not live).
func (f *fixture) SyncRun(v *canvas.Version, s *completion.Sample) *completion.Run {
	f.t.Helper()
	r := f.Run(v)
	r.Async, r.Status, r.WebhookURL, r.ForwardHeaders = false, completion.StatusCompleted, "", nil
	require.NoError(f.t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r, Sample: s}))
	return r
}

// ReviewItems returns every item of the queue of v's canvas.
func (f *fixture) ReviewItems(v *canvas.Version) []*review.Item {
	f.t.Helper()
	items, total, err := f.s.ListReviewItems(f.ctx, review.Filter{WorkspaceID: f.ws.ID, CanvasID: v.PromptID,
		Scope: canvas.Scope{WorkspaceID: f.ws.ID, UserID: "alice"}, Limit: 100})
	require.NoError(f.t, err)
	require.Len(f.t, items, total)
	return items
}

func testReview(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "SampleTakesByPercentage", func(t *testing.T, f *fixture) {
		half := f.SampledCanvas("50", f.Project("p"))
		taken := f.SyncRun(half, &completion.Sample{Bucket: 4999})
		f.SyncRun(half, &completion.Sample{Bucket: 5000})
		f.SyncRun(half, nil)
		items := f.ReviewItems(half)
		require.Len(t, items, 1, "only the bucket under 50 %% of them is taken")
		it := items[0]
		assert.Equal(t, taken.ID, it.RunID)
		assert.Equal(t, half.PromptID, it.PromptID)
		assert.Equal(t, half.ID, it.VersionID)
		assert.Equal(t, review.StatusPending, it.Status)
		assert.Equal(t, review.SourceSampled, it.Source)
		assert.Equal(t, "alice", it.CreatedBy, "a sampled item is the run's creator's")
		assert.Nil(t, it.Annotation)
		assert.True(t, it.CreatedAt.Equal(taken.CreatedAt), "the item commits with the run")

		none := f.SampledCanvas("0", nil)
		f.SyncRun(none, &completion.Sample{Bucket: 0})
		assert.Empty(t, f.ReviewItems(none))
		all := f.SampledCanvas("100", nil)
		f.SyncRun(all, &completion.Sample{Bucket: completion.SampleBuckets - 1})
		assert.Len(t, f.ReviewItems(all), 1)
		decimal := f.SampledCanvas("12.5", nil)
		f.SyncRun(decimal, &completion.Sample{Bucket: 1249})
		f.SyncRun(decimal, &completion.Sample{Bucket: 1250})
		assert.Len(t, f.ReviewItems(decimal), 1)
	})
	run(t, newStore, "AsyncRunSampledWhenAccepted", func(t *testing.T, f *fixture) {
		v := f.SampledCanvas("100", nil)
		r := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r, Sample: &completion.Sample{}}))
		items := f.ReviewItems(v)
		require.Len(t, items, 1)
		assert.Equal(t, r.ID, items[0].RunID)
	})
	run(t, newStore, "RunKeepsVariables", func(t *testing.T, f *fixture) {
		v := f.SampledCanvas("0", nil)
		r := f.Run(v)
		r.Variables = map[string]any{"name": "Ada", "n": 2.0, "file": map[string]any{"file_url": "vault://x"}}
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r.Variables, got.Variables)
		plain := f.SyncRun(v, nil)
		got, err = f.s.GetRun(f.ctx, f.ws.ID, plain.ID)
		require.NoError(t, err)
		assert.Nil(t, got.Variables)
	})
	run(t, newStore, "AddOncePerRun", func(t *testing.T, f *fixture) {
		v := f.SampledCanvas("100", nil)
		sampled := f.SyncRun(v, &completion.Sample{})
		other := f.SyncRun(v, nil)
		it := &review.Item{WorkspaceID: f.ws.ID, RunID: other.ID, PromptID: v.PromptID, VersionID: v.ID,
			Source: review.SourceManual, CreatedBy: "bob"}
		require.NoError(t, f.s.AddReviewItem(f.ctx, it))
		require.NotEmpty(t, it.ID)
		assert.Equal(t, review.StatusPending, it.Status)
		got, err := f.s.GetReviewItem(f.ctx, f.ws.ID, it.ID)
		require.NoError(t, err)
		assert.Equal(t, review.SourceManual, got.Source)
		assert.Equal(t, "bob", got.CreatedBy)
		assert.True(t, it.CreatedAt.Equal(got.CreatedAt))

		requireCode(t, canvas.ECONFLICT, f.s.AddReviewItem(f.ctx, &review.Item{WorkspaceID: f.ws.ID, RunID: sampled.ID,
			PromptID: v.PromptID, VersionID: v.ID, Source: review.SourceManual, CreatedBy: "bob"}))
		requireCode(t, canvas.ECONFLICT, f.s.AddReviewItem(f.ctx, &review.Item{WorkspaceID: f.ws.ID, RunID: other.ID,
			PromptID: v.PromptID, VersionID: v.ID, Source: review.SourceManual, CreatedBy: "bob"}))
		assert.Len(t, f.ReviewItems(v), 2)
	})
	run(t, newStore, "AnnotateAndAgain", func(t *testing.T, f *fixture) {
		v := f.SampledCanvas("100", nil)
		f.SyncRun(v, &completion.Sample{})
		it := f.ReviewItems(v)[0]
		score := 0.25
		got, err := f.s.AnnotateReviewItem(f.ctx, review.AnnotateParams{WorkspaceID: f.ws.ID, ID: it.ID,
			Annotation: review.Annotation{Passed: false, Score: &score, Comment: "rude", AnnotatedBy: "carol"}})
		require.NoError(t, err)
		assert.Equal(t, review.StatusReviewed, got.Status)
		require.NotNil(t, got.Annotation)
		assert.False(t, got.Annotation.Passed)
		assert.Equal(t, &score, got.Annotation.Score)
		assert.Equal(t, "rude", got.Annotation.Comment)
		assert.Equal(t, "carol", got.Annotation.AnnotatedBy)
		assert.False(t, got.Annotation.AnnotatedAt.IsZero())

		got, err = f.s.AnnotateReviewItem(f.ctx, review.AnnotateParams{WorkspaceID: f.ws.ID, ID: it.ID,
			Annotation: review.Annotation{Passed: true, AnnotatedBy: "dave"}})
		require.NoError(t, err)
		assert.True(t, got.Annotation.Passed)
		assert.Nil(t, got.Annotation.Score, "a new annotation replaces the old one")
		assert.Empty(t, got.Annotation.Comment)
		reread, err := f.s.GetReviewItem(f.ctx, f.ws.ID, it.ID)
		require.NoError(t, err)
		assert.Equal(t, got, reread)

		other := f.Workspace("other")
		_, err = f.s.AnnotateReviewItem(f.ctx, review.AnnotateParams{WorkspaceID: other.ID, ID: it.ID,
			Annotation: review.Annotation{Passed: true}})
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetReviewItem(f.ctx, other.ID, it.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ListFiltersAndScope", func(t *testing.T, f *fixture) {
		p1, p2 := f.Project("p1"), f.Project("p2")
		a, b := f.SampledCanvas("100", p1), f.SampledCanvas("100", p2)
		var aRuns []*completion.Run
		for range 3 {
			aRuns = append(aRuns, f.SyncRun(a, &completion.Sample{}))
		}
		f.SyncRun(b, &completion.Sample{})
		first := f.ReviewItems(a)
		require.Len(t, first, 3)
		assert.Equal(t, aRuns[2].ID, first[0].RunID, "newest first")
		_, err := f.s.AnnotateReviewItem(f.ctx, review.AnnotateParams{WorkspaceID: f.ws.ID, ID: first[1].ID,
			Annotation: review.Annotation{Passed: true, AnnotatedBy: "carol"}})
		require.NoError(t, err)

		list := func(fl review.Filter) ([]*review.Item, int) {
			fl.WorkspaceID = f.ws.ID
			if fl.Scope.WorkspaceID == "" {
				fl.Scope = canvas.Scope{WorkspaceID: f.ws.ID}
			}
			if fl.Limit == 0 {
				fl.Limit = 100
			}
			items, total, err := f.s.ListReviewItems(f.ctx, fl)
			require.NoError(t, err)
			return items, total
		}
		_, total := list(review.Filter{})
		assert.Equal(t, 4, total)
		items, total := list(review.Filter{CanvasID: a.PromptID, Status: review.StatusPending})
		assert.Equal(t, 2, total)
		assert.Len(t, items, 2)
		items, _ = list(review.Filter{Status: review.StatusReviewed})
		require.Len(t, items, 1)
		assert.Equal(t, first[1].ID, items[0].ID)
		_, total = list(review.Filter{VersionID: b.ID})
		assert.Equal(t, 1, total)
		items, total = list(review.Filter{Scope: canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{p2.ID}}})
		assert.Equal(t, 1, total, "a restricted scope lists its projects' canvases only")
		assert.Equal(t, b.PromptID, items[0].PromptID)
		items, total = list(review.Filter{CanvasID: a.PromptID, Limit: 2, Offset: 2})
		assert.Equal(t, 3, total)
		require.Len(t, items, 1)
		assert.Equal(t, first[2].ID, items[0].ID)
		_, total = list(review.Filter{WorkspaceID: f.ws.ID, Scope: canvas.Scope{WorkspaceID: f.Workspace("x").ID}})
		assert.Zero(t, total)
	})
	run(t, newStore, "StatsByVersion", func(t *testing.T, f *fixture) {
		v1 := f.SampledCanvas("100", nil)
		c, err := f.s.GetCanvas(f.ctx, canvas.GetCanvasParams{WorkspaceID: f.ws.ID, ID: v1.PromptID})
		require.NoError(t, err)
		v2 := f.Version(c, "hello again")
		for range 4 {
			f.SyncRun(v1, &completion.Sample{})
		}
		f.SyncRun(v2, &completion.Sample{})
		items := f.ReviewItems(v1)
		annotate := func(it *review.Item, passed bool, score *float64) {
			_, err := f.s.AnnotateReviewItem(f.ctx, review.AnnotateParams{WorkspaceID: f.ws.ID, ID: it.ID,
				Annotation: review.Annotation{Passed: passed, Score: score, AnnotatedBy: "carol"}})
			require.NoError(t, err)
		}
		one, half := 1.0, 0.5
		var v1Items []*review.Item
		for _, it := range items {
			if it.VersionID == v1.ID {
				v1Items = append(v1Items, it)
			}
		}
		require.Len(t, v1Items, 4)
		annotate(v1Items[0], true, &one)
		annotate(v1Items[1], false, &half)
		annotate(v1Items[2], true, nil)

		stats, err := f.s.ReviewStats(f.ctx, f.ws.ID, v1.PromptID)
		require.NoError(t, err)
		require.Len(t, stats, 2)
		assert.Equal(t, v2.ID, stats[0].VersionID, "the version with the latest item first")
		assert.Equal(t, review.VersionStats{VersionID: v2.ID, Pending: 1}, *stats[0])
		s1 := stats[1]
		assert.Equal(t, v1.ID, s1.VersionID)
		assert.Equal(t, 1, s1.Pending)
		assert.Equal(t, 3, s1.Reviewed)
		assert.Equal(t, 2, s1.Good)
		assert.Equal(t, 1, s1.Bad)
		require.NotNil(t, s1.MeanScore)
		assert.InDelta(t, 0.75, *s1.MeanScore, 1e-9)

		none, err := f.s.ReviewStats(f.ctx, f.ws.ID, f.SampledCanvas("0", nil).PromptID)
		require.NoError(t, err)
		assert.Empty(t, none)
	})
	run(t, newStore, "PurgedRunTakesItsItem", func(t *testing.T, f *fixture) {
		v := f.SampledCanvas("100", nil)
		old := f.SyncRun(v, &completion.Sample{})
		cut := f.Cutoff()
		recent := f.SyncRun(v, &completion.Sample{})
		n, err := f.s.PurgeRuns(f.ctx, cut, 10)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		items := f.ReviewItems(v)
		require.Len(t, items, 1)
		assert.Equal(t, recent.ID, items[0].RunID)
		assert.NotEqual(t, old.ID, items[0].RunID)
	})
}
