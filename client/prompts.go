package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Prompts defaults.
const (
	// DefaultPollInterval is how often a prompt is checked with
	// If-None-Match while its watch is down.
	DefaultPollInterval = 2 * time.Second
	// DefaultWatchIdle is how long a watch may stay silent (no event and no
	// heartbeat) before it is taken for dead and opened again.
	DefaultWatchIdle = 45 * time.Second
	// DefaultRequestTimeout bounds each fetch of a prompt (retries
	// included).
	DefaultRequestTimeout = 10 * time.Second
)

// PromptsOptions configures a Prompts.
type PromptsOptions struct {
	// SnapshotDir, when set, is a directory written by canvasd export. A
	// prompt the server cannot be asked for (it is down or unreachable)
	// when first fetched is served from it, marked Stale.
	SnapshotDir string
	// PollInterval is how often a prompt is checked with If-None-Match
	// while its watch is down (or always, with DisableWatch); zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// WatchIdle is how long a watch may stay silent before it is opened
	// again; zero means DefaultWatchIdle. Keep it above the server's
	// heartbeat interval.
	WatchIdle time.Duration
	// RequestTimeout bounds each fetch of a prompt, retries included, so
	// that a server that accepts connections but does not answer makes the
	// prompt stale rather than wait; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// DisableWatch keeps prompts fresh by conditional polling only.
	DisableWatch bool
	// AssignmentKey is sent with every fetch and watch (assignmentKey):
	// an environment that serves a split serves these prompts the version
	// the key is assigned, the same one while the publication is active,
	// and the watch follows that version. Without one a split's version is
	// drawn at each fetch. To assign each end user, pass their key on the
	// completion (wire.CompletionRequest.AssignmentKey) instead.
	AssignmentKey string
	// OnUpdate, when set, is called after a prompt's state changed: with
	// the prompt (fresh or stale), or with the error Get now returns (the
	// prompt is gone, say). It runs on the prompt's tracking goroutine.
	OnUpdate func(canvasID, envName string, p *Prompt, err error)
}

// Prompt is a version an environment serves, as last fetched. A Prompt is
// shared by every caller and never changes: treat Version as read-only.
type Prompt struct {
	CanvasID string
	EnvName  string
	// Version is the served version, in full, with ResolvedMessages: its
	// messages with their includes replaced (a snapshot's version has
	// none).
	Version *wire.Version
	// ETag is the server's tag of Version; empty for a snapshot's version.
	ETag string
	// Stale is true when the server could not confirm Version lately (it
	// is down or unreachable) or Version came from the offline snapshot;
	// Err then says why.
	Stale bool
	Err   error
}

// Prompts fetches the versions environments serve and keeps them in a
// local cache that the environment watch keeps fresh (with conditional
// polling while the watch is down). Get answers from the cache without
// a request and without allocating once a prompt is tracked. On network
// failure the last good version is served, marked Stale; once the server
// says a prompt is gone (404, or a gone event) it is never served again
// until the server serves something there anew. Each tracked prompt has
// its own goroutine and watch connection. Close stops the tracking.
type Prompts struct {
	c    *Client
	opts PromptsOptions

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.RWMutex
	entries  map[promptKey]*promptEntry
	snapshot map[string]*promptfile.Canvas
}

type promptKey struct{ canvasID, envName string }

// promptEntry is one tracked prompt.
type promptEntry struct {
	key   promptKey
	state atomic.Pointer[promptState]
	ready chan struct{} // closed once the first fetch ended
	// lastEventID is the watch's Last-Event-ID; used by the tracking
	// goroutine only.
	lastEventID string
	// confirmed is true once the server answered for this prompt; from
	// then on the snapshot is not used.
	confirmed bool
}

// promptState is what Get answers: a prompt, or an error.
type promptState struct {
	prompt *Prompt
	err    error
}

// NewPrompts returns a Prompts over c. It reads the snapshot directory, if
// any, at once.
func (c *Client) NewPrompts(opts PromptsOptions) (*Prompts, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.WatchIdle <= 0 {
		opts.WatchIdle = DefaultWatchIdle
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	p := &Prompts{c: c, opts: opts, entries: make(map[promptKey]*promptEntry), snapshot: make(map[string]*promptfile.Canvas)}
	if opts.SnapshotDir != "" {
		files, err := promptfile.ReadDir(opts.SnapshotDir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			p.snapshot[f.ID] = f
		}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Close stops tracking every prompt and waits for the tracking goroutines.
func (p *Prompts) Close() error {
	p.cancel()
	p.wg.Wait()
	return nil
}

// Get returns the version envName of canvasID serves. The first Get of a
// prompt fetches it (waiting at most for ctx) and starts tracking it; every
// later Get answers from the cache. The prompt is Stale when the server
// could not be reached; the error is the server's (an *Error, e.g.
// NOT_FOUND once the prompt is gone) when there is nothing to serve.
func (p *Prompts) Get(ctx context.Context, canvasID, envName string) (*Prompt, error) {
	key := promptKey{canvasID, envName}
	p.mu.RLock()
	e := p.entries[key]
	p.mu.RUnlock()
	if e == nil {
		e = p.track(key)
	}
	if st := e.state.Load(); st != nil {
		return st.prompt, st.err
	}
	select {
	case <-e.ready:
		st := e.state.Load()
		return st.prompt, st.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// track returns key's entry, starting its tracking goroutine when new.
func (p *Prompts) track(key promptKey) *promptEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[key]; e != nil {
		return e
	}
	e := &promptEntry{key: key, ready: make(chan struct{})}
	p.entries[key] = e
	if p.ctx.Err() != nil {
		e.state.Store(&promptState{err: errors.New("client: Prompts is closed")})
		close(e.ready)
		return e
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.run(e)
	}()
	return e
}

// run keeps e fresh until Close: the first fetch, then the watch, with a
// conditional poll each time the watch is down.
func (p *Prompts) run(e *promptEntry) {
	p.refresh(e)
	close(e.ready)
	watch := !p.opts.DisableWatch
	for p.ctx.Err() == nil {
		if watch {
			err := p.watch(e)
			if code := StatusCode(err); code == http.StatusMethodNotAllowed || code == http.StatusNotFound && notRouted(err) {
				watch = false // a server without the watch: poll instead
			}
			if p.ctx.Err() != nil {
				return
			}
		}
		p.refresh(e)
		if sleep(p.ctx, p.opts.PollInterval) != nil {
			return
		}
	}
}

// notRouted tells a server without the watch route (its 404 says "No
// route") from a canvas that is not found.
func notRouted(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.HasPrefix(e.Message, "No route")
}

// set stores e's new state and reports it.
func (p *Prompts) set(e *promptEntry, st *promptState) {
	e.state.Store(st)
	if p.opts.OnUpdate != nil {
		p.opts.OnUpdate(e.key.canvasID, e.key.envName, st.prompt, st.err)
	}
}

// refresh asks the server for e's prompt with If-None-Match and updates
// its state: a new version, a confirmation (no longer stale), gone, or,
// on a network failure, the last good version marked stale.
func (p *Prompts) refresh(e *promptEntry) {
	cur := e.state.Load()
	var header http.Header
	if cur != nil && cur.prompt != nil && cur.prompt.ETag != "" {
		header = http.Header{"If-None-Match": {cur.prompt.ETag}}
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.opts.RequestTimeout)
	defer cancel()
	// A resolved read: the version with its includes replaced. Its ETag,
	// which the watch's events carry, changes when an included version
	// changes, so a prompt that includes others is never stale.
	q := p.envQuery(e.key)
	q.Set("resolve", "true")
	resp, err := p.c.call(ctx, request{method: http.MethodGet, path: "/environment/version",
		query: q, header: header})
	if p.ctx.Err() != nil {
		if cur == nil {
			e.state.Store(&promptState{err: p.ctx.Err()})
		}
		return
	}
	status := StatusCode(err)
	switch {
	case err != nil && (status == 0 || status >= 500 || status == http.StatusTooManyRequests):
		p.unreachable(e, cur, err)
	case err != nil:
		e.confirmed = true
		p.set(e, &promptState{err: err})
	case resp.status == http.StatusNotModified:
		if cur == nil || cur.prompt == nil {
			p.unreachable(e, cur, errors.New("client: 304 without a cached version"))
			return
		}
		e.confirmed = true
		if cur.prompt.Stale {
			fresh := *cur.prompt
			fresh.Stale, fresh.Err = false, nil
			p.set(e, &promptState{prompt: &fresh})
		}
	default:
		e.confirmed = true
		var v wire.Version
		if err := json.Unmarshal(resp.body, &v); err != nil {
			p.unreachable(e, cur, err)
			return
		}
		p.set(e, &promptState{prompt: &Prompt{CanvasID: e.key.canvasID, EnvName: e.key.envName, Version: &v,
			ETag: resp.header.Get("ETag")}})
	}
}

// unreachable records that the server could not answer: the last good
// prompt stays, marked stale; before any answer the snapshot is used.
func (p *Prompts) unreachable(e *promptEntry, cur *promptState, err error) {
	switch {
	case cur != nil && cur.prompt != nil:
		if cur.prompt.Stale && cur.prompt.Err != nil {
			return // already reported
		}
		stale := *cur.prompt
		stale.Stale, stale.Err = true, err
		p.set(e, &promptState{prompt: &stale})
	case cur != nil && e.confirmed:
		// The server said there is nothing to serve; keep saying it.
	case !e.confirmed:
		if f := p.snapshot[e.key.canvasID]; f != nil {
			if v := f.Served(e.key.envName); v != nil {
				p.set(e, &promptState{prompt: &Prompt{CanvasID: e.key.canvasID, EnvName: e.key.envName,
					Version: f.CanvasVersion(v), Stale: true, Err: err}})
				return
			}
		}
		if cur == nil || cur.err == nil || cur.err.Error() != err.Error() {
			p.set(e, &promptState{err: err})
		}
	}
}

// envQuery is the query that selects key's environment, with the
// assignment key.
func (p *Prompts) envQuery(key promptKey) url.Values {
	q := envQuery(key.canvasID, key.envName)
	if p.opts.AssignmentKey != "" {
		q.Set("assignmentKey", p.opts.AssignmentKey)
	}
	return q
}

// watch follows e's environment on GET /environment/watch until the
// stream ends, fails or stays silent past WatchIdle. Each event whose ETag
// differs from the cached one is fetched; a gone event drops the prompt.
func (p *Prompts) watch(e *promptEntry) error {
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	q := p.envQuery(e.key)
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, p.c.base+"/environment/watch?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	p.c.setHeaders(hr, nil)
	hr.Header.Set("Accept", "text/event-stream")
	if e.lastEventID != "" {
		hr.Header.Set("Last-Event-ID", e.lastEventID)
	}
	// The idle timer runs from the request on: a server that accepts the
	// connection but never answers is given up like a silent stream.
	idle := time.AfterFunc(p.opts.WatchIdle, cancel)
	defer idle.Stop()
	resp, err := p.c.hc.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return decodeError(&response{status: resp.StatusCode, header: resp.Header, body: b})
	}
	// The stream is up: one conditional read confirms (or corrects) the
	// cache, whatever the stream sends first.
	p.refresh(e)
	idle.Reset(p.opts.WatchIdle)
	body := &idleReader{r: resp.Body, timer: idle, idle: p.opts.WatchIdle}
	return readEvents(body, func(ev event) error {
		if ev.id != "" {
			e.lastEventID = ev.id
		}
		switch ev.name {
		case "version":
			var data wire.WatchVersionEvent
			_ = json.Unmarshal([]byte(ev.data), &data)
			if cur := e.state.Load(); cur == nil || cur.prompt == nil || cur.prompt.ETag != data.ETag || cur.prompt.Stale {
				p.refresh(e)
			}
		case "gone":
			var data wire.WatchGoneEvent
			_ = json.Unmarshal([]byte(ev.data), &data)
			e.confirmed = true
			p.set(e, &promptState{err: &Error{StatusCode: http.StatusNotFound, Code: wire.CodeNotFound, Message: data.Message}})
		}
		return nil
	})
}

// idleReader cancels a stream (through timer) when no byte arrived for
// idle.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (r *idleReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}
