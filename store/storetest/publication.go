package storetest

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testPublications(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "PublishFillsEveryField", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		origin := f.Version(c, "one")
		v := &canvas.Version{PromptID: c.ID, WorkspaceID: f.ws.ID, Title: "copy", CreatedBy: "carol",
			Draft: true, OriginVersionID: &origin.ID}
		require.NoError(t, f.s.CreateVersion(f.ctx, v))
		pub, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v.ID, By: "dave"})
		require.NoError(t, err)
		assert.True(t, created)
		assert.NotEmpty(t, pub.PublicationID)
		assert.NotEmpty(t, pub.EnvironmentID)
		assert.Equal(t, env.Production, pub.EnvironmentName)
		assert.True(t, pub.EnvironmentIsSystem)
		assert.Equal(t, v.ID, pub.VersionID)
		assert.Equal(t, c.ID, pub.PromptID)
		assert.Equal(t, "copy", pub.Title)
		assert.Equal(t, ptr(true), pub.Promoted)
		assert.Equal(t, ptr(true), pub.Draft)
		assert.Equal(t, &origin.ID, pub.OriginVersionID)
		assert.Equal(t, 2, pub.VersionIndex)
		assert.Equal(t, "carol", pub.CreatedBy)
		assert.Equal(t, "carol", pub.UpdatedBy)
		require.NotNil(t, pub.CreatedAt)
		assert.True(t, v.CreatedAt.Equal(*pub.CreatedAt))
		require.NotNil(t, pub.UpdatedAt)
		assert.False(t, pub.PublishedAt.IsZero())
		assert.Equal(t, "dave", pub.PublishedBy)
		assert.Nil(t, pub.UnpublishedAt)
		assert.True(t, pub.IsActive)
		assert.Equal(t, int64(1), pub.Seq)
	})
	run(t, newStore, "PublishAnswersWhatHistoryReads", func(t *testing.T, f *fixture) {
		// What Publish returns is the publication as the history reads it
		// afterwards, promoted flag included, wherever it is published.
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		staging := f.Env(c, "staging")
		for _, step := range []struct {
			v            *canvas.Version
			env          string
			wantPromoted bool
		}{
			{v1, "staging", false},
			{v1, env.Production, true},
			{v2, "staging", false},
			{v1, "staging", true},
			{v2, env.Production, true},
		} {
			pub := f.Publish(step.v, step.env)
			assert.Equal(t, ptr(step.wantPromoted), pub.Promoted, "%s to %s", step.v.Title, step.env)
			e := staging
			if step.env == env.Production {
				prod, err := f.s.GetEnvironment(f.ctx, f.ws.ID, pub.EnvironmentID)
				require.NoError(t, err)
				e = prod
			}
			assert.Equal(t, pub, f.History(e)[0], "%s to %s", step.v.Title, step.env)
		}
	})
	run(t, newStore, "PublishActiveVersionIsNoop", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", nil, "alice"), "one")
		first := f.Publish(v, env.Production)
		again, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: v.PromptID,
			EnvName: env.Production, VersionID: v.ID, By: "bob"})
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, first, again, "the active publication, unchanged")
		prod, err := f.s.GetEnvironment(f.ctx, f.ws.ID, first.EnvironmentID)
		require.NoError(t, err)
		assert.Len(t, f.History(prod), 1)
	})
	run(t, newStore, "ReplacementGetsUnpublishedAt", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		first := f.Publish(v1, env.Production)
		second := f.Publish(v2, env.Production)
		assert.Equal(t, int64(2), second.Seq)
		prod, err := f.s.GetEnvironment(f.ctx, f.ws.ID, first.EnvironmentID)
		require.NoError(t, err)
		hist := f.History(prod)
		require.Len(t, hist, 2)
		assert.Equal(t, second.PublicationID, hist[0].PublicationID, "newest first")
		assert.True(t, hist[0].IsActive)
		assert.Nil(t, hist[0].UnpublishedAt)
		assert.Equal(t, ptr(true), hist[0].Promoted)
		assert.Equal(t, first.PublicationID, hist[1].PublicationID)
		assert.False(t, hist[1].IsActive)
		require.NotNil(t, hist[1].UnpublishedAt)
		assert.True(t, hist[1].UnpublishedAt.Equal(second.PublishedAt), "replaced when the later one was published")
		assert.Equal(t, ptr(false), hist[1].Promoted)
		assert.True(t, hist[1].PublishedAt.Equal(first.PublishedAt))
	})
	run(t, newStore, "RollbackPublishesAgain", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		f.Publish(v2, env.Production)
		back := f.Publish(v1, env.Production)
		assert.Equal(t, int64(3), back.Seq)
		prod, err := f.s.GetEnvironment(f.ctx, f.ws.ID, back.EnvironmentID)
		require.NoError(t, err)
		assert.Equal(t, []string{v1.ID, v2.ID, v1.ID}, ids(f.History(prod), pubVersion))
		assert.Equal(t, &v1.ID, prod.ActiveVersionID)
	})
	run(t, newStore, "PublishNotFound", func(t *testing.T, f *fixture) {
		c, d := f.Canvas("c", nil, "alice"), f.Canvas("d", nil, "alice")
		v, elsewhere := f.Version(c, "one"), f.Version(d, "other")
		deleted := f.Version(c, "gone")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: deleted.ID,
			By: "bob"}))
		other := f.Workspace("other")
		for name, p := range map[string]env.PublishParams{
			"custom environment missing": {WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: "staging", VersionID: v.ID},
			"version of another canvas":  {WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: elsewhere.ID},
			"deleted version":            {WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: deleted.ID},
			"missing version":            {WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: missingID},
			"missing canvas":             {WorkspaceID: f.ws.ID, CanvasID: missingID, EnvName: env.Production, VersionID: v.ID},
			"other workspace":            {WorkspaceID: other.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID},
		} {
			p.By = "bob"
			_, _, err := f.s.Publish(f.ctx, p)
			assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "%s: %v", name, err)
		}
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.Empty(t, f.History(prod), "failed publishes leave no history")
	})
	run(t, newStore, "PaginationBySeq", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		var last *env.Publication
		for i := range 25 {
			last = f.Publish([]*canvas.Version{v1, v2}[i%2], env.Production)
		}
		envID := last.EnvironmentID
		seqs := func(limit, offset int) ([]int64, int) {
			page, total, err := f.s.ListPublications(f.ctx, f.ws.ID, envID, limit, offset)
			require.NoError(t, err)
			require.NotNil(t, page)
			out := []int64{}
			for _, p := range page {
				out = append(out, p.Seq)
			}
			return out, total
		}
		got, total := seqs(5, 0)
		assert.Equal(t, 25, total)
		assert.Equal(t, []int64{25, 24, 23, 22, 21}, got)
		got, _ = seqs(10, 10)
		assert.Equal(t, []int64{15, 14, 13, 12, 11, 10, 9, 8, 7, 6}, got)
		got, _ = seqs(10, 20)
		assert.Equal(t, []int64{5, 4, 3, 2, 1}, got, "a short last page")
		got, total = seqs(10, 25)
		assert.Empty(t, got, "offset at the end")
		assert.Equal(t, 25, total)
		got, total = seqs(10, 1000)
		assert.Empty(t, got, "offset beyond the end")
		assert.Equal(t, 25, total)
	})
	run(t, newStore, "ListNotFound", func(t *testing.T, f *fixture) {
		_, _, err := f.s.ListPublications(f.ctx, f.ws.ID, missingID, 20, 0)
		requireCode(t, canvas.ENOTFOUND, err)
		e := f.Env(f.Canvas("c", nil, "alice"), "staging")
		other := f.Workspace("other")
		_, _, err = f.s.ListPublications(f.ctx, other.ID, e.ID, 20, 0)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "ConcurrentPublishersKeepOneActive", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		const publishers, rounds = 8, 25
		versions := make([]*canvas.Version, publishers)
		for i := range versions {
			versions[i] = f.Version(c, "v")
		}
		var created atomic.Int64
		var wg sync.WaitGroup
		for _, v := range versions {
			wg.Go(func() {
				for range rounds {
					_, ok, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
						EnvName: env.Production, VersionID: v.ID, By: "bot"})
					if !assert.NoError(t, err) {
						return
					}
					if ok {
						created.Add(1)
					}
				}
			})
		}
		wg.Wait()
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		hist := f.History(prod)
		require.Len(t, hist, int(created.Load()), "one history entry per created publication")
		active := 0
		for i, p := range hist {
			assert.Equal(t, int64(len(hist)-i), p.Seq, "seqs are contiguous")
			if p.IsActive {
				active++
				assert.Nil(t, p.UnpublishedAt)
			} else {
				assert.NotNil(t, p.UnpublishedAt)
			}
		}
		assert.Equal(t, 1, active, "exactly one active publication")
		require.NotNil(t, prod.ActiveVersionID)
		assert.Equal(t, hist[0].VersionID, *prod.ActiveVersionID)
	})
	run(t, newStore, "EventJobCommitsWithThePublicationWhenSubscribed", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		var told []*env.Publication
		event := func(id string) *env.PublishEvent {
			return &env.PublishEvent{Type: "publication.created", Job: func(pub *env.Publication) (*queue.Job, error) {
				told = append(told, pub)
				return &queue.Job{ID: id, WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: pub.PublicationID}, nil
			}}
		}
		publish := func(v *canvas.Version, ev *env.PublishEvent) (*env.Publication, bool, error) {
			return f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID, EnvName: env.Production,
				VersionID: v.ID, By: "bob", Event: ev})
		}

		// No application of the canvas takes the event: no job, and the
		// event's job is not even built.
		other := f.Canvas("other", nil, "alice")
		f.Application(other, "https://example.com/other", "whsec_c2VjcmV0")
		err := f.s.CreateApplication(f.ctx, &webhook.Application{WorkspaceID: f.ws.ID, Name: "off",
			EnvironmentName: "production", CreatedBy: "alice", PromptID: &c.ID,
			Events: webhook.Subscription{Enabled: false, URL: "https://example.com/off", EventTypes: []string{}}}, "whsec_c2VjcmV0")
		require.NoError(t, err)
		err = f.s.CreateApplication(f.ctx, &webhook.Application{WorkspaceID: f.ws.ID, Name: "runs only",
			EnvironmentName: "production", CreatedBy: "alice", PromptID: &c.ID,
			Events: webhook.Subscription{Enabled: true, URL: "https://example.com/runs",
				EventTypes: []string{"run.completed"}}}, "whsec_c2VjcmV0")
		require.NoError(t, err)
		unheard := uuid.NewString()
		pub, created, err := publish(v1, event(unheard))
		require.NoError(t, err)
		require.True(t, created)
		assert.Empty(t, told, "no subscription takes the event")
		_, err = f.s.GetJob(f.ctx, unheard)
		requireCode(t, canvas.ENOTFOUND, err)

		// A subscription that lists the type takes it.
		err = f.s.CreateApplication(f.ctx, &webhook.Application{WorkspaceID: f.ws.ID, Name: "listed",
			EnvironmentName: "production", CreatedBy: "alice", PromptID: &c.ID,
			Events: webhook.Subscription{Enabled: true, URL: "https://example.com/listed",
				EventTypes: []string{"run.completed", "publication.created"}}}, "whsec_c2VjcmV0")
		require.NoError(t, err)
		jobID := uuid.NewString()
		pub, created, err = publish(v2, event(jobID))
		require.NoError(t, err)
		require.True(t, created)
		require.Len(t, told, 1)
		assert.Equal(t, pub, told[0], "the event's job sees the publication as written")
		j := f.GetJob(jobID)
		assert.Equal(t, "test.outbox", j.Kind)
		assert.Equal(t, pub.PublicationID, j.RefID)
		assert.Equal(t, queue.StatusQueued, j.Status, "written with the publication, before any worker")

		_, created, err = publish(v2, event(uuid.NewString()))
		require.NoError(t, err)
		assert.False(t, created)
		assert.Len(t, told, 1, "publishing the active version again writes no job")

		_, _, err = publish(v1, &env.PublishEvent{Type: "publication.created",
			Job: func(*env.Publication) (*queue.Job, error) { return nil, nil }})
		require.NoError(t, err, "an event may write nothing")

		// A publish whose job cannot be written (it has no kind), or whose
		// event fails, writes neither the job nor the publication.
		badID := uuid.NewString()
		_, _, err = publish(v2, &env.PublishEvent{Type: "publication.created",
			Job: func(pub *env.Publication) (*queue.Job, error) {
				return &queue.Job{ID: badID, WorkspaceID: f.ws.ID, RefID: pub.PublicationID}, nil
			}})
		requireCode(t, canvas.EINVALID, err)
		_, err = f.s.GetJob(f.ctx, badID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, _, err = publish(v2, &env.PublishEvent{Type: "publication.created",
			Job: func(*env.Publication) (*queue.Job, error) {
				return nil, canvas.Errorf(canvas.ECONFLICT, "no event today")
			}})
		requireCode(t, canvas.ECONFLICT, err)
		prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			Name: env.Production})
		require.NoError(t, err)
		assert.Len(t, f.History(prod), 3, "the failed publishes left no history")
		assert.Equal(t, v1.ID, *prod.ActiveVersionID)
	})
	run(t, newStore, "EventJobForEverySubscriptionThatTakesAll", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		f.Application(c, "https://example.com/hook", "whsec_c2VjcmV0") // takes every type
		jobID := uuid.NewString()
		pub, created, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v.ID, By: "bob", Event: &env.PublishEvent{Type: "publication.created",
				Job: func(pub *env.Publication) (*queue.Job, error) {
					return &queue.Job{ID: jobID, WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: pub.PublicationID}, nil
				}}})
		require.NoError(t, err)
		require.True(t, created)
		assert.Equal(t, pub.PublicationID, f.GetJob(jobID).RefID)
	})
	run(t, newStore, "EventFailsAloneInAGroupCommit", func(t *testing.T, f *fixture) {
		const publishers = 8
		type result struct {
			canvas *canvas.Canvas
			jobID  string
			err    error
		}
		results := make([]result, publishers)
		versions := make([]*canvas.Version, publishers)
		for i := range results {
			results[i].canvas = f.Canvas("c", nil, "alice")
			f.Application(results[i].canvas, "https://example.com/hook", "whsec_c2VjcmV0")
			results[i].jobID = uuid.NewString()
			versions[i] = f.Version(results[i].canvas, "one")
		}
		var wg sync.WaitGroup
		for i := range results {
			r := &results[i]
			wg.Go(func() {
				_, _, r.err = f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: f.ws.ID, CanvasID: r.canvas.ID,
					EnvName: env.Production, VersionID: versions[i].ID, By: "bot",
					Event: &env.PublishEvent{Type: "publication.created", Job: func(pub *env.Publication) (*queue.Job, error) {
						j := &queue.Job{ID: r.jobID, WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: pub.PublicationID}
						if i%2 == 1 {
							j.Kind = "" // cannot be written: this publish fails
						}
						return j, nil
					}}})
			})
		}
		wg.Wait()
		for i, r := range results {
			prod, err := f.s.FindEnvironment(f.ctx, env.FindEnvironmentParams{WorkspaceID: f.ws.ID,
				CanvasID: r.canvas.ID, Name: env.Production})
			require.NoError(t, err)
			_, jobErr := f.s.GetJob(f.ctx, r.jobID)
			if i%2 == 1 {
				requireCode(t, canvas.EINVALID, r.err)
				assert.Empty(t, f.History(prod), "publish %d failed with its job", i)
				requireCode(t, canvas.ENOTFOUND, jobErr)
				continue
			}
			require.NoError(t, r.err)
			assert.Len(t, f.History(prod), 1, "publish %d stands", i)
			assert.NoError(t, jobErr, "publish %d has its job", i)
		}
	})
}
