package storetest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Request makes a pending request by alice to publish v to envName.
func (f *fixture) Request(v *canvas.Version, envName string) *env.PublicationRequest {
	f.t.Helper()
	r, err := f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: v.WorkspaceID, CanvasID: v.PromptID,
		EnvName: envName, VersionID: v.ID, Comment: "ready", By: "alice"})
	require.NoError(f.t, err)
	return r
}

// Decide applies a decision by by to a request.
func (f *fixture) Decide(r *env.PublicationRequest, decision, by string) (*env.PublicationRequest, *env.Publication, error) {
	return f.s.DecideRequest(f.ctx, env.DecideParams{WorkspaceID: f.ws.ID, ID: r.ID, Decision: decision,
		Comment: decision + " by " + by, By: by})
}

// CompletedExperiment stores a completed experiment of v, started now,
// whose test cases were selected by tagIDs, with passed of its len(passed)
// results passing.
func (f *fixture) CompletedExperiment(v *canvas.Version, tagIDs []string, passed ...bool) *experiment.Experiment {
	f.t.Helper()
	ids := make([]string, len(passed))
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	e := &experiment.Experiment{WorkspaceID: v.WorkspaceID, PromptID: v.PromptID, TestCaseIDs: ids,
		Request: experiment.Request{PromptID: v.PromptID, VersionIDs: []string{v.ID}, TagIDs: tagIDs, Repetitions: 1,
			Evaluators: []experiment.Evaluator{{Name: "exact", Type: "exact"}}},
		Versions: []experiment.Version{{VersionID: v.ID}}, Progress: experiment.Progress{Total: len(passed)},
		CreatedBy: "alice", Runner: experiment.Runner{UserID: "alice"}}
	require.NoError(f.t, f.s.CreateExperiment(f.ctx, e, &queue.Job{WorkspaceID: v.WorkspaceID, Kind: experiment.JobKindRun}))
	_, err := f.s.StartExperiment(f.ctx, f.ws.ID, e.ID, e.Versions)
	require.NoError(f.t, err)
	for i, p := range passed {
		_, err := f.s.CreateResult(f.ctx, result(e, i, p))
		require.NoError(f.t, err)
	}
	_, err = f.s.FinishExperiment(f.ctx, experiment.FinishParams{WorkspaceID: f.ws.ID, ID: e.ID,
		Status: experiment.StatusCompleted}, nil)
	require.NoError(f.t, err)
	return e
}

func testRequests(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateRemembersWhatTheEnvironmentServes", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		r := f.Request(v2, env.Production)
		assert.Equal(t, env.RequestPending, r.Status)
		assert.Equal(t, env.ResourcePrompt, r.ResourceType)
		assert.Equal(t, c.ID, r.ResourceID)
		assert.Equal(t, env.Production, r.EnvName)
		assert.Equal(t, v2.ID, r.VersionID)
		assert.Equal(t, "ready", r.Comment)
		assert.Equal(t, "alice", r.RequestedBy)
		assert.Equal(t, []env.Approval{}, r.Approvals)
		assert.Equal(t, 1, r.RequiredApprovals, "an unprotected environment takes one approval")
		assert.Equal(t, &v1.ID, r.BaseVersionID)
		assert.Equal(t, &v1.ID, r.CurrentVersionID)
		assert.False(t, r.Stale)
		assert.False(t, r.VersionChanged)
		require.NotNil(t, r.DiffPath)
		assert.Equal(t, "/prompt-version/"+v2.ID+"/diff?against="+v1.ID, *r.DiffPath)
		assert.Nil(t, r.DecidedAt)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r, got)

		_, err = f.s.GetRequest(f.ctx, f.Workspace("other").ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v1.ID, By: "alice"})
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: "missing", VersionID: v2.ID, By: "alice"})
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: uuid.NewString(), By: "alice"})
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "TwoDistinctApproversPublish", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		prod := f.Protect(c, env.Production, 2, nil)
		r := f.Request(v2, env.Production)
		assert.Equal(t, 2, r.RequiredApprovals)

		_, _, err := f.Decide(r, env.DecisionApprove, "alice")
		requireCode(t, canvas.EFORBIDDEN, err)
		got, pub, err := f.Decide(r, env.DecisionApprove, "bob")
		require.NoError(t, err)
		assert.Nil(t, pub, "one approval of two publishes nothing")
		assert.Equal(t, env.RequestPending, got.Status)
		require.Len(t, got.Approvals, 1)
		assert.Equal(t, "bob", got.Approvals[0].By)
		assert.Equal(t, "approve by bob", got.Approvals[0].Comment)
		_, _, err = f.Decide(r, env.DecisionApprove, "bob")
		requireCode(t, canvas.ECONFLICT, err)
		assert.Len(t, f.History(prod), 1)

		got, pub, err = f.Decide(r, env.DecisionApprove, "carol")
		require.NoError(t, err)
		require.NotNil(t, pub)
		assert.Equal(t, v2.ID, pub.VersionID)
		assert.Equal(t, "alice", pub.PublishedBy, "the publication is the requester's")
		assert.Equal(t, env.RequestPublished, got.Status)
		assert.Equal(t, &pub.PublicationID, got.PublicationID)
		assert.Equal(t, ptr("carol"), got.DecidedBy)
		assert.NotNil(t, got.DecidedAt)
		assert.Len(t, got.Approvals, 2)
		assert.False(t, got.Stale, "a published request is not stale")
		hist := f.History(prod)
		require.Len(t, hist, 2)
		assert.Equal(t, v2.ID, hist[0].VersionID)
		assert.True(t, hist[0].IsActive)

		_, _, err = f.Decide(r, env.DecisionApprove, "dave")
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "StaleWhenTheEnvironmentMoved", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		f.Publish(v1, env.Production)
		f.Protect(c, env.Production, 1, nil)
		first, second := f.Request(v2, env.Production), f.Request(v3, env.Production)
		_, pub, err := f.Decide(first, env.DecisionApprove, "bob")
		require.NoError(t, err)
		require.NotNil(t, pub)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, second.ID)
		require.NoError(t, err)
		assert.True(t, got.Stale)
		assert.Equal(t, &v1.ID, got.BaseVersionID)
		assert.Equal(t, &v2.ID, got.CurrentVersionID)
	})
	run(t, newStore, "StaleWhenTheSplitMoved", func(t *testing.T, f *fixture) {
		// The environment moves from one split to another that starts
		// with the same version: a request made before is stale.
		c := f.Canvas("c", nil, "alice")
		v1, v2, v3 := f.Version(c, "one"), f.Version(c, "two"), f.Version(c, "three")
		f.PublishSplit(env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 50}, env.SplitEntry{VersionID: v2.ID, Weight: 50})
		f.Protect(c, env.Production, 1, nil)
		reweigh, err := f.RequestSplit(c, env.Production, env.SplitEntry{VersionID: v1.ID, Weight: 70},
			env.SplitEntry{VersionID: v2.ID, Weight: 30})
		require.NoError(t, err)
		other := f.Request(v3, env.Production)
		assert.False(t, other.Stale)
		_, pub, err := f.Decide(reweigh, env.DecisionApprove, "bob")
		require.NoError(t, err)
		require.NotNil(t, pub)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, other.ID)
		require.NoError(t, err)
		assert.Equal(t, &v1.ID, got.BaseVersionID)
		assert.Equal(t, &v1.ID, got.CurrentVersionID, "the same first version")
		assert.True(t, got.Stale, "another publication is active")
	})
	run(t, newStore, "AnEditedVersionIsNotApproved", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		f.Protect(c, env.Production, 1, nil)
		r := f.Request(v2, env.Production)
		msgs, err := f.s.ListMessages(f.ctx, f.ws.ID, v2.ID)
		require.NoError(t, err)
		_, err = f.s.UpdateMessage(f.ctx, canvas.UpdateMessageParams{WorkspaceID: f.ws.ID, ID: msgs[0].ID,
			Update: canvas.MessageUpdate{Content: ptr("changed after the request")}, By: "mallory"})
		require.NoError(t, err)
		got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.True(t, got.VersionChanged)
		_, _, err = f.Decide(r, env.DecisionApprove, "bob")
		requireCode(t, canvas.ECONFLICT, err)
	})
	run(t, newStore, "RequiredExperimentGatesApproval", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		smoke, other := f.TagOf(c, "smoke"), f.TagOf(c, "other")
		f.Protect(c, env.Production, 1, &env.RequiredExperiment{TagIDs: []string{smoke.ID}, MinPassRate: 0.75})
		r := f.Request(v2, env.Production)
		refused := func(why string) {
			t.Helper()
			_, _, err := f.Decide(r, env.DecisionApprove, "bob")
			requireCode(t, canvas.ECONFLICT, err)
			got, err := f.s.GetRequest(f.ctx, f.ws.ID, r.ID)
			require.NoError(t, err)
			assert.Empty(t, got.Approvals, why)
		}
		refused("no experiment")
		f.CompletedExperiment(v1, []string{smoke.ID}, true, true, true, true)
		refused("an experiment of another version")
		f.CompletedExperiment(v2, []string{other.ID}, true, true, true, true)
		refused("an experiment over other tags")
		f.CompletedExperiment(v2, []string{smoke.ID}, true, true, false, false)
		refused("a pass rate of 0.5")
		queued, _ := f.Experiment(v2, 1)
		_, err := f.s.StartExperiment(f.ctx, f.ws.ID, queued.ID, queued.Versions)
		require.NoError(t, err)
		_, err = f.s.CreateResult(f.ctx, result(queued, 0, true))
		require.NoError(t, err)
		refused("an experiment still running")

		f.CompletedExperiment(v2, []string{other.ID, smoke.ID}, true, true, true, false)
		got, pub, err := f.Decide(r, env.DecisionApprove, "bob")
		require.NoError(t, err, "a completed experiment over the tags with a pass rate of 0.75")
		require.NotNil(t, pub)
		assert.Equal(t, env.RequestPublished, got.Status)
	})
	run(t, newStore, "AnExperimentBeforeAnEditDoesNotCount", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		f.Protect(c, env.Production, 1, &env.RequiredExperiment{TagIDs: []string{}, MinPassRate: 1})
		f.CompletedExperiment(v2, nil, true)
		_, err := f.s.UpdateVersion(f.ctx, canvas.UpdateVersionParams{WorkspaceID: f.ws.ID, ID: v2.ID,
			Update: canvas.VersionUpdate{Content: ptr("edited after the experiment")}, By: "alice"})
		require.NoError(t, err)
		r := f.Request(v2, env.Production)
		_, _, err = f.Decide(r, env.DecisionApprove, "bob")
		requireCode(t, canvas.ECONFLICT, err)
		f.CompletedExperiment(v2, nil, true)
		_, pub, err := f.Decide(r, env.DecisionApprove, "bob")
		require.NoError(t, err)
		assert.NotNil(t, pub)
	})
	run(t, newStore, "RejectAndWithdraw", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v := f.Version(c, "one")
		r := f.Request(v, env.Production)
		_, _, err := f.Decide(r, env.DecisionReject, "alice")
		requireCode(t, canvas.EFORBIDDEN, err)
		got, pub, err := f.Decide(r, env.DecisionReject, "bob")
		require.NoError(t, err)
		assert.Nil(t, pub)
		assert.Equal(t, env.RequestRejected, got.Status)
		assert.Equal(t, "reject by bob", got.DecisionComment)
		_, _, err = f.Decide(r, env.DecisionWithdraw, "alice")
		requireCode(t, canvas.ECONFLICT, err)

		w := f.Request(v, env.Production)
		_, _, err = f.Decide(w, env.DecisionWithdraw, "bob")
		requireCode(t, canvas.EFORBIDDEN, err)
		got, _, err = f.Decide(w, env.DecisionWithdraw, "alice")
		require.NoError(t, err)
		assert.Equal(t, env.RequestWithdrawn, got.Status)
		assert.Equal(t, ptr("alice"), got.DecidedBy)
	})
	run(t, newStore, "ListFilters", func(t *testing.T, f *fixture) {
		p1, p2 := f.Project("p1"), f.Project("p2")
		c1, c2 := f.Canvas("c1", p1, "alice"), f.Canvas("c2", p2, "alice")
		draft := f.Canvas("draft", nil, "alice")
		r1 := f.Request(f.Version(c1, "one"), env.Production)
		r2 := f.Request(f.Version(c2, "two"), env.Production)
		rd := f.Request(f.Version(draft, "three"), env.Production)
		_, _, err := f.Decide(r1, env.DecisionReject, "bob")
		require.NoError(t, err)
		list := func(q env.RequestQuery) ([]string, int) {
			t.Helper()
			q.WorkspaceID, q.Limit = f.ws.ID, 10
			page, total, err := f.s.ListRequests(f.ctx, q)
			require.NoError(t, err)
			return ids(page, func(r *env.PublicationRequest) string { return r.ID }), total
		}
		got, total := list(env.RequestQuery{UserID: "alice"})
		assert.Equal(t, []string{rd.ID, r2.ID, r1.ID}, got, "newest first, the owner's drafts included")
		assert.Equal(t, 3, total)
		got, _ = list(env.RequestQuery{UserID: "bob"})
		assert.Equal(t, []string{r2.ID, r1.ID}, got, "another's personal drafts are not listed")
		got, _ = list(env.RequestQuery{Projects: []string{p2.ID}})
		assert.Equal(t, []string{r2.ID}, got)
		got, _ = list(env.RequestQuery{CanvasID: c1.ID})
		assert.Equal(t, []string{r1.ID}, got)
		got, _ = list(env.RequestQuery{Status: env.RequestPending, UserID: "alice"})
		assert.Equal(t, []string{rd.ID, r2.ID}, got)
		page, total, err := f.s.ListRequests(f.ctx, env.RequestQuery{WorkspaceID: f.ws.ID, UserID: "alice", Limit: 1, Offset: 1})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		require.Len(t, page, 1)
		assert.Equal(t, r2.ID, page[0].ID)
	})
	run(t, newStore, "EventJobsCommitWithTheirSteps", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		v1, v2 := f.Version(c, "one"), f.Version(c, "two")
		f.Publish(v1, env.Production)
		err := f.s.CreateApplication(f.ctx, &webhook.Application{WorkspaceID: f.ws.ID, Name: "listed",
			EnvironmentName: "production", CreatedBy: "alice", PromptID: &c.ID,
			Events: webhook.Subscription{Enabled: true, URL: "https://example.com/listed",
				EventTypes: []string{"publication_request.created", "publication_request.published", "publication.created"}}},
			"whsec_c2VjcmV0")
		require.NoError(t, err)
		var jobs []string
		events := func(step string) *env.RequestEvent {
			return &env.RequestEvent{Type: "publication_request." + step, Job: func(r *env.PublicationRequest) (*queue.Job, error) {
				id := uuid.NewString()
				jobs = append(jobs, id)
				return &queue.Job{ID: id, WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: r.ID}, nil
			}}
		}
		var pubJobs int
		r, err := f.s.CreateRequest(f.ctx, env.CreateRequestParams{WorkspaceID: f.ws.ID, CanvasID: c.ID,
			EnvName: env.Production, VersionID: v2.ID, By: "alice", Event: events})
		require.NoError(t, err)
		require.Len(t, jobs, 1, "created is taken")
		got, pub, err := f.s.DecideRequest(f.ctx, env.DecideParams{WorkspaceID: f.ws.ID, ID: r.ID, Decision: env.DecisionApprove,
			By: "bob", Event: events, Publish: &env.PublishEvent{Type: "publication.created",
				Job: func(pub *env.Publication) (*queue.Job, error) {
					pubJobs++
					return &queue.Job{WorkspaceID: f.ws.ID, Kind: "test.outbox", RefID: pub.PublicationID}, nil
				}}})
		require.NoError(t, err)
		require.NotNil(t, pub)
		assert.Equal(t, env.RequestPublished, got.Status)
		require.Len(t, jobs, 2, "approved is not taken, published is")
		assert.Equal(t, 1, pubJobs, "the publication's own event")
		for _, id := range jobs {
			j := f.GetJob(id)
			assert.Equal(t, r.ID, j.RefID)
			assert.Equal(t, queue.StatusQueued, j.Status)
		}
	})
}
