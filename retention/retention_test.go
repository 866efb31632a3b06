package retention_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// records creates, in the workspace of a store, one record of each kind a
// purge deletes, in the state end leaves it (ended or not), and reads
// whether each one still exists.
type records struct {
	t    *testing.T
	ctx  context.Context
	db   *sqlite.DB
	path string
	ws   string
}

// set is one record of each kind: a job, a delivery, a run, a workflow
// run.
type set struct{ job, delivery, run, workflowRun string }

func newRecords(t *testing.T) *records {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ws := &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	return &records{t: t, ctx: ctx, db: db, path: path, ws: ws.ID}
}

// ended creates a finished job, a failed delivery with an attempt, a
// completed run and a cancelled workflow run.
func (r *records) ended() set {
	t, ctx, db := r.t, r.ctx, r.db
	t.Helper()
	var s set
	j := &queue.Job{WorkspaceID: r.ws, Kind: "k"}
	require.NoError(t, db.EnqueueJob(ctx, j))
	claimed, err := db.ClaimJobs(ctx, "other", []string{"k"}, 1, time.Hour)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	require.NoError(t, db.CompleteJob(ctx, j.ID, "other"))
	s.job = j.ID
	s.delivery = r.delivery()
	require.NoError(t, db.RecordAttempt(ctx, webhook.AttemptOutcome{WorkspaceID: r.ws, DeliveryID: s.delivery,
		Attempt: &webhook.LoggedAttempt{At: time.Now().UTC(), StatusCode: new(500)}, Status: webhook.StatusFailed}))
	s.run = r.run(completion.StatusCompleted)
	s.workflowRun = r.workflowRun(workflow.StatusCancelled)
	return s
}

// live creates a queued job, a pending delivery, a queued run and a
// workflow run waiting for review.
func (r *records) live() set {
	t, ctx, db := r.t, r.ctx, r.db
	t.Helper()
	j := &queue.Job{WorkspaceID: r.ws, Kind: "k", RunAt: time.Now().Add(24 * time.Hour)}
	require.NoError(t, db.EnqueueJob(ctx, j))
	return set{job: j.ID, delivery: r.delivery(), run: r.run(completion.StatusQueued),
		workflowRun: r.workflowRun(workflow.StatusWaitingForReview)}
}

func (r *records) delivery() string {
	r.t.Helper()
	o, err := webhook.NewOutgoing(r.ws, "ref", webhook.Delivery{URL: "https://example.com/hook",
		Event: webhook.Event{Type: webhook.EventCompletionFailed, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{}`)}})
	require.NoError(r.t, err)
	require.NoError(r.t, r.db.CreateDeliveries(r.ctx, []webhook.Outgoing{o}))
	return o.Delivery.ID
}

func (r *records) run(status string) string {
	r.t.Helper()
	run := &completion.Run{WorkspaceID: r.ws, Kind: completion.KindCompletion, CanvasID: "c", VersionID: "v",
		Model: model.EchoModel, Status: status, Async: status == completion.StatusQueued, CreatedBy: "alice",
		Request: model.Request{Model: model.EchoModel}}
	var job *queue.Job
	if run.Async {
		job = &queue.Job{WorkspaceID: r.ws, Kind: completion.JobKindCompletion, RunAt: time.Now().Add(24 * time.Hour)}
	}
	require.NoError(r.t, r.db.CreateRun(r.ctx, completion.CreateRunParams{Run: run, Job: job}))
	return run.ID
}

func (r *records) workflowRun(status string) string {
	r.t.Helper()
	run := &workflow.Run{WorkspaceID: r.ws, CanvasID: "c", VersionID: "v", Environment: workflow.EnvAPI,
		Status: workflow.StatusPending, Input: map[string]workflow.InputValue{}, CreatedBy: "alice",
		Deadline: time.Now().Add(time.Hour),
		Steps:    []*workflow.Step{{ID: "start", Name: "Start", ActionID: "input", Status: workflow.StepPending}}}
	require.NoError(r.t, r.db.CreateWorkflowRun(r.ctx, run, nil))
	_, err := r.db.ChangeWorkflowRun(r.ctx, &workflow.Change{WorkspaceID: r.ws, RunID: run.ID,
		From: workflow.StatusPending, To: status})
	require.NoError(r.t, err)
	return run.ID
}

// exists reports which records of s are still stored.
func (r *records) exists(s set) [4]bool {
	r.t.Helper()
	found := func(err error) bool {
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return false
		}
		require.NoError(r.t, err)
		return true
	}
	_, errJob := r.db.GetJob(r.ctx, s.job)
	_, errDelivery := r.db.GetDelivery(r.ctx, r.ws, s.delivery)
	_, errRun := r.db.GetRun(r.ctx, r.ws, s.run)
	_, errWorkflow := r.db.GetWorkflowRun(r.ctx, r.ws, s.workflowRun)
	return [4]bool{found(errJob), found(errDelivery), found(errRun), found(errWorkflow)}
}

// cutoff returns an instant after every write so far and before every
// later one, waiting until the wall clock (the store's) has passed it.
func cutoff(t *testing.T) time.Time {
	t.Helper()
	prev := time.Now()
	var cut time.Time
	require.Eventually(t, func() bool { cut = time.Now(); return cut.After(prev) }, time.Second, time.Microsecond)
	require.Eventually(t, func() bool { return time.Now().After(cut) }, time.Second, time.Microsecond)
	return cut
}

// queuedPurges returns the run_at of every queued purge job, read from the
// database file directly: the store lists no jobs.
func queuedPurges(t *testing.T, path string) []time.Time {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer conn.Close()
	rows, err := conn.Query(`SELECT run_at FROM jobs WHERE kind = ? AND status = 'queued'`, retention.JobKind)
	require.NoError(t, err)
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		at, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		out = append(out, at)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestPurger_Handle(t *testing.T) {
	t.Run("WorkerPurgesAndReschedules", func(t *testing.T) {
		r := newRecords(t)
		old, live := r.ended(), r.live()
		for range 2 {
			r.ended() // enough old jobs for several batches
		}
		cut := cutoff(t)
		recent := r.ended()

		const keep = 24 * time.Hour
		clock := func() time.Time { return cut.Add(keep) } // every old record is past its retention
		p := retention.New(retention.Options{Store: r.db, Jobs: keep, Deliveries: keep, Runs: keep,
			WorkflowRuns: keep, BatchSize: 2, Now: clock})
		w := queue.NewWorker(r.db, queue.WorkerOptions{PollInterval: 5 * time.Millisecond})
		w.Handle(retention.JobKind, p.Handle)
		scheduled, err := p.Schedule(r.ctx)
		require.NoError(t, err)
		require.True(t, scheduled)
		again, err := p.Schedule(r.ctx)
		require.NoError(t, err)
		assert.False(t, again, "one purge is queued at a time")
		first := queuedPurges(t, r.path)
		require.Len(t, first, 1)

		ctx, cancel := context.WithCancel(r.ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		require.Eventually(t, func() bool {
			purges := queuedPurges(t, r.path)
			return len(purges) == 1 && purges[0].Equal(clock().Add(retention.DefaultInterval))
		}, 10*time.Second, 5*time.Millisecond, "the purge queues its successor")
		cancel()
		require.NoError(t, <-done)

		assert.Equal(t, [4]bool{}, r.exists(old), "old ended records are gone")
		assert.Equal(t, [4]bool{true, true, true, true}, r.exists(live), "live records stay, however old")
		assert.Equal(t, [4]bool{true, true, true, true}, r.exists(recent), "recent ended records stay")
		again, err = p.Schedule(r.ctx)
		require.NoError(t, err)
		assert.False(t, again, "the successor is the one purge queued")
	})

	t.Run("ZeroRetentionKeepsForever", func(t *testing.T) {
		r := newRecords(t)
		old := r.ended()
		cut := cutoff(t)
		p := retention.New(retention.Options{Store: r.db, Jobs: time.Hour,
			Now: func() time.Time { return cut.Add(time.Hour) }})
		n, err := p.Purge(r.ctx)
		require.NoError(t, err)
		assert.Equal(t, retention.Counts{Jobs: 1}, n)
		assert.Equal(t, [4]bool{false, true, true, true}, r.exists(old), "only jobs have a retention")
	})

	t.Run("AllZeroSchedulesNothing", func(t *testing.T) {
		r := newRecords(t)
		p := retention.New(retention.Options{Store: r.db})
		scheduled, err := p.Schedule(r.ctx)
		require.NoError(t, err)
		assert.False(t, scheduled)
		require.NoError(t, p.Handle(r.ctx, &queue.Job{ID: "left-over", Kind: retention.JobKind}))
		assert.Empty(t, queuedPurges(t, r.path), "a left-over purge ends the chain")
	})

	t.Run("StopsWhenItsContextEnds", func(t *testing.T) {
		r := newRecords(t)
		r.ended()
		cut := cutoff(t)
		p := retention.New(retention.Options{Store: r.db, Jobs: time.Hour,
			Now: func() time.Time { return cut.Add(time.Hour) }})
		ctx, cancel := context.WithCancel(r.ctx)
		cancel()
		err := p.Handle(ctx, &queue.Job{ID: "j", Kind: retention.JobKind})
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, queuedPurges(t, r.path), "a purge that did not finish queues no successor")
	})
}
