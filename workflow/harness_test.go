package workflow_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// harness is a workflow service over a real SQLite database, with the
// built-in actions (llm steps answered by Models), a queue worker running
// its jobs, and an editor's context.
type harness struct {
	t        testing.TB
	db       *sqlite.DB
	svc      *workflow.Service
	canvases *canvas.Service
	envs     *env.Service
	actions  *workflow.Registry
	worker   *queue.Worker
	ctx      context.Context
	canvasID string
	models   *fakeModels
	vault    *vault.Service
	stop     func()
}

type harnessOptions struct {
	path        string
	concurrency int
	lease       time.Duration
	noWorker    bool
	register    func(r *workflow.Registry)
}

// newHarness opens a database in a temporary directory (or opts.path) and
// starts a worker, stopped at cleanup.
func newHarness(t testing.TB, opts harnessOptions) *harness {
	t.Helper()
	if opts.path == "" {
		opts.path = filepath.Join(t.TempDir(), "canvas.db")
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, opts.path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ws, err := db.GetWorkspaceByName(ctx, "wf")
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		ws = &canvas.Workspace{Name: "wf"}
		require.NoError(t, db.CreateWorkspace(ctx, ws))
	} else {
		require.NoError(t, err)
	}
	h := &harness{t: t, db: db, models: &fakeModels{}}
	h.ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	h.envs = env.NewService(env.Options{Store: db, Canvases: db})
	h.actions = workflow.Builtins(workflow.BuiltinOptions{Models: h.models, Includes: h.envs})
	if opts.register != nil {
		opts.register(h.actions)
	}
	lease := opts.lease
	if lease == 0 {
		lease = time.Minute // longer than any test: a cancellation must not wait for a heartbeat
	}
	h.worker = queue.NewWorker(db, queue.WorkerOptions{Lease: lease, PollInterval: 20 * time.Millisecond,
		Concurrency: 4, ShutdownTimeout: 2 * time.Second})
	blobs, err := vault.NewFSBlobs(filepath.Join(filepath.Dir(opts.path), "files"))
	require.NoError(t, err)
	h.vault = vault.NewService(vault.Options{Store: db, Blobs: blobs})
	h.svc = workflow.NewService(workflow.Options{Store: db, Canvases: db, Actions: h.actions, Files: h.vault,
		Notify: h.worker.Notify, Cancel: h.worker.Cancel, Concurrency: opts.concurrency,
		PollInterval: 20 * time.Millisecond})
	h.worker.Handle(workflow.JobKindRun, h.svc.HandleJob)
	h.worker.Handle(workflow.JobKindDeadline, h.svc.HandleDeadline)
	h.canvases = canvas.NewService(canvas.Options{Store: db, Workflows: h.svc, Includes: h.envs})
	c, err := h.canvases.CreateCanvas(h.ctx, canvas.CreateCanvasParams{Title: "Workflows"})
	require.NoError(t, err)
	h.canvasID = c.ID
	if !opts.noWorker {
		h.startWorker()
	}
	return h
}

// startWorker runs the worker until the returned stop (also run at
// cleanup).
func (h *harness) startWorker() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.worker.Run(ctx)
	}()
	h.stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	h.t.Cleanup(h.stop)
}

// version saves spec as a workflow version and returns its id.
func (h *harness) version(spec string) string {
	h.t.Helper()
	v, err := h.canvases.CreateVersion(h.ctx, canvas.CreateVersionParams{PromptID: h.canvasID,
		IsWorkflow: true, WorkflowSpec: json.RawMessage(spec)})
	require.NoError(h.t, err)
	return v.ID
}

// start starts a preview run of spec with input.
func (h *harness) start(spec string, input map[string]any) *workflow.View {
	h.t.Helper()
	v, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(spec), Input: input})
	require.NoError(h.t, err)
	return v
}

// await reads run id until its status is one of want (or it ends), for at
// most 10 seconds, and returns it.
func (h *harness) await(id string, want ...string) *workflow.View {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := h.svc.Get(h.ctx, id)
		require.NoError(h.t, err)
		for _, s := range want {
			if v.Status == s {
				return v
			}
		}
		if workflow.Terminal(v.Status) || time.Now().After(deadline) {
			require.Failf(h.t, "unexpected run status", "run %s is %s, want one of %v: %s", id, v.Status, want, mustJSON(v))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitStep reads run id until its step stepID is in status want, for at
// most 10 seconds.
func (h *harness) awaitStep(id, stepID, want string) *workflow.View {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := h.svc.Get(h.ctx, id)
		require.NoError(h.t, err)
		if steps(v)[stepID] == want {
			return v
		}
		if time.Now().After(deadline) {
			require.Failf(h.t, "unexpected step status", "step %s is %s, want %s", stepID, steps(v)[stepID], want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// steps returns the statuses of a view's steps by id.
func steps(v *workflow.View) map[string]string {
	out := map[string]string{}
	for _, s := range v.Steps {
		out[s.ID] = s.Status
	}
	return out
}

// step returns a view's step by id.
func step(t testing.TB, v *workflow.View, id string) *workflow.Step {
	t.Helper()
	for _, s := range v.Steps {
		if s.ID == id {
			return s
		}
	}
	require.Failf(t, "no step", "run has no step %s", id)
	return nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// output decodes a step's output.
func output(t testing.TB, s *workflow.Step) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(s.Output, &v))
	return v
}

// fakeModels answers llm steps: it echoes the last message's content with
// usage of 3 input and 5 output tokens, unless block is set, in which case
// it waits for the context to end and reports that.
type fakeModels struct {
	mu        sync.Mutex
	calls     int
	block     bool
	started   chan struct{}
	cancelled chan struct{}
}

func (m *fakeModels) Target(_ context.Context, _ model.Scope, want model.Want) (model.Target, error) {
	return model.Target{Model: want.Model, Provider: want.Provider, CredentialID: want.CredentialID}, nil
}

func (m *fakeModels) Call(ctx context.Context, workspaceID string, req model.Request, _ func(model.Chunk) error) (*model.Result, error) {
	m.mu.Lock()
	m.calls++
	block, started, cancelled := m.block, m.started, m.cancelled
	m.mu.Unlock()
	if block {
		if started != nil {
			close(started)
		}
		<-ctx.Done()
		if cancelled != nil {
			close(cancelled)
		}
		return nil, &canvas.Error{Code: canvas.ECANCELLED, Message: "cancelled", Err: ctx.Err()}
	}
	text := req.Messages[len(req.Messages)-1].Content
	return &model.Result{Text: text, Model: req.Model, FinishReason: "stop",
		Usage: model.Usage{InputTokens: 3, OutputTokens: 5}}, nil
}

// blockNext makes the next call block until its context ends; started is
// closed when it begins, cancelled when its context ended.
func (m *fakeModels) blockNext() (started, cancelled chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.block, m.started, m.cancelled = true, make(chan struct{}), make(chan struct{})
	return m.started, m.cancelled
}
