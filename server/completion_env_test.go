package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/require"
)

// completionEnv is a test server with the completion service, its model
// registry (echo, plus what a test registers) and, when started, queue
// workers that execute async runs and deliver webhooks to loopback
// receivers.
type completionEnv struct {
	*testEnv
	Providers *model.Registry
	Service   *completion.Service
	worker    atomic.Pointer[queue.Worker]
}

// newCompletionEnv starts the server; withWorker also starts a worker.
func newCompletionEnv(t *testing.T, withWorker bool) *completionEnv {
	t.Helper()
	ce := &completionEnv{Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{}))}
	ce.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		ce.Service = completion.NewService(completion.Options{Store: db, Canvases: db,
			Environments: o.Environments, Models: model.NewCaller(model.Options{Providers: ce.Providers}), Notify: ce.notify})
		o.Completions = ce.Service
	})
	if withWorker {
		ce.StartWorker(t, queue.WorkerOptions{})
	}
	return ce
}

// notify wakes the current worker, if any.
func (ce *completionEnv) notify() {
	if w := ce.worker.Load(); w != nil {
		w.Notify()
	}
}

// StartWorker runs a worker with the completion and delivery handlers
// until the returned stop is called (or the test ends). Zero options get
// quick polling for tests.
func (ce *completionEnv) StartWorker(t *testing.T, opts queue.WorkerOptions) (stop func()) {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	if opts.Backoff == nil {
		opts.Backoff = func(int) time.Duration { return 10 * time.Millisecond }
	}
	w := queue.NewWorker(ce.Store, opts)
	for _, kind := range completion.JobKinds() {
		w.Handle(kind, ce.Service.HandleJob)
	}
	w.Handle(webhook.JobKind, webhook.NewHandler(webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	ce.worker.Store(w)
	stop = sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
		ce.worker.CompareAndSwap(w, nil)
	})
	t.Cleanup(stop)
	return stop
}

// waitRun polls GET path until the run is recorded and terminal, and
// returns it.
func (ce *completionEnv) waitRun(t *testing.T, path string) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		r := ce.Do(http.MethodGet, path, ce.Editor, nil)
		if r.Status == http.StatusNotFound {
			return false // a streamed run is recorded once it ends
		}
		run = r.Map(t)
		return run["status"] == completion.StatusCompleted || run["status"] == completion.StatusFailed
	}, 10*time.Second, 20*time.Millisecond, "run %s never finished", path)
	return run
}

// hookReceiver is a webhook endpoint that records what it receives.
type hookReceiver struct {
	URL string
	got chan hookRequest
}

type hookRequest struct {
	Header http.Header
	Event  struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{got: make(chan hookRequest, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req hookRequest
		req.Header = r.Header.Clone()
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req.Event); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.got <- req
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/hook"
	return h
}

// next returns the next notification received.
func (h *hookReceiver) next(t *testing.T) hookRequest {
	t.Helper()
	select {
	case r := <-h.got:
		return r
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no webhook notification arrived")
		return hookRequest{}
	}
}

// recordingProvider wraps a provider, keeping the last request and telling
// when each call returns, and with which error.
type recordingProvider struct {
	model.Provider
	mu       sync.Mutex
	last     model.Request
	returned chan error
}

func newRecordingProvider(p model.Provider) *recordingProvider {
	return &recordingProvider{Provider: p, returned: make(chan error, 16)}
}

func (p *recordingProvider) record(req model.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = req
}

func (p *recordingProvider) Last() model.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

func (p *recordingProvider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	p.record(req)
	res, err := p.Provider.Complete(ctx, req)
	p.returned <- err
	return res, err
}

func (p *recordingProvider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	p.record(req)
	res, err := p.Provider.Stream(ctx, req, emit)
	p.returned <- err
	return res, err
}
