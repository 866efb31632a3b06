package server

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// Watch defaults: how often the store is checked for changes made outside
// this process, and how often an idle stream sends a heartbeat comment.
const (
	DefaultWatchPollInterval = time.Second
	DefaultWatchHeartbeat    = 15 * time.Second
	DefaultWatchRecheck      = 5 * time.Second
	// MaxLongPoll bounds the wait of a long-polled GET /environment/version.
	MaxLongPoll = 60 * time.Second
)

// WatchOptions tunes the environment watch and the long poll.
type WatchOptions struct {
	// PollInterval is how often the store's data version is checked for
	// changes this process was not told of; zero means
	// DefaultWatchPollInterval.
	PollInterval time.Duration
	// Heartbeat is how often a watch stream sends a comment line when
	// nothing else was sent; zero means DefaultWatchHeartbeat.
	Heartbeat time.Duration
	// Recheck is how often, at most, a watch stream authenticates its
	// request again and checks its access to the canvas (before sending a
	// change, or at a heartbeat); zero means DefaultWatchRecheck. A revoked
	// key or a lost access ends the stream within about this long, and
	// 1,000 streams do not all re-authenticate at every publish.
	Recheck time.Duration
	// Stop, when closed, ends every watch stream and answers every long
	// poll (304) at once, so that a graceful shutdown does not wait for
	// them: canvasd closes it from http.Server.RegisterOnShutdown.
	Stop <-chan struct{}
}

// watchKey names one watched environment as one reader sees it: the
// canvas is read for the reader's workspace and user, as every read is,
// and a split's version for the reader's assignment key ("" watches the
// split as a whole, env.ActiveVersionParams.Stable).
type watchKey struct {
	workspaceID, userID, canvasID, envName, assignmentKey string
}

// watchState is what a watched environment serves: its ETag, publication
// and version, or Gone with the reason when it serves nothing (the
// environment or the canvas was deleted, or nothing is published).
type watchState struct {
	ETag          string
	PublicationID string
	VersionID     string
	Gone          bool
	Code          string
	Message       string
}

// watchHub finds changes of watched environments and tells their
// subscribers. One goroutine runs while anything is watched: woken by the
// environment service after a publish in this process, and every
// PollInterval otherwise, it reads the store's data version (one cheap
// read) and, only when it moved, re-reads each watched key once, however
// many subscribers it has, and signals those whose key changed.
type watchHub struct {
	envs     *env.Service
	changes  canvas.ChangeVersioner
	interval time.Duration

	mu      sync.Mutex
	keys    map[watchKey]*watched
	running bool
}

// watched is one key's last known state and its subscribers.
type watched struct {
	state watchState
	known bool
	subs  map[chan struct{}]struct{}
}

// newWatchHub returns the hub of a server built with opts (after the
// engine filled them). The change signal is opts.Changes; without one
// every watched key is re-read at each poll.
func newWatchHub(opts Options) *watchHub {
	return &watchHub{envs: opts.Environments, changes: opts.Changes,
		interval: cmp.Or(opts.Watch.PollInterval, DefaultWatchPollInterval), keys: make(map[watchKey]*watched)}
}

// subscribe registers interest in key: ch, which should have a buffer of
// one, receives a value whenever the key's state may have changed (sends
// never block, so signals coalesce); cancel unregisters it. One channel
// may serve several keys.
func (h *watchHub) subscribe(key watchKey, ch chan struct{}) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wd := h.keys[key]
	if wd == nil {
		wd = &watched{subs: make(map[chan struct{}]struct{})}
		h.keys[key] = wd
	}
	wd.subs[ch] = struct{}{}
	if !h.running {
		h.running = true
		go h.run()
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(wd.subs, ch)
		if len(wd.subs) == 0 && h.keys[key] == wd {
			delete(h.keys, key)
		}
	}
}

// run polls until nothing is watched.
func (h *watchHub) run() {
	ctx := context.Background()
	ticker := time.NewTicker(h.interval)
	defer ticker.Stop()
	var last int64
	haveLast := false
	for {
		select {
		case <-h.envs.Changed():
		case <-ticker.C:
		}
		h.mu.Lock()
		if len(h.keys) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		keys := make([]watchKey, 0, len(h.keys))
		for k := range h.keys {
			keys = append(keys, k)
		}
		h.mu.Unlock()

		if h.changes != nil {
			v, err := h.changes.DataVersion(ctx)
			if err == nil && haveLast && v == last && !h.hasUnknown() {
				continue
			}
			last, haveLast = v, err == nil
		}
		for _, k := range keys {
			st, err := h.read(ctx, k)
			if err != nil {
				continue // a transient failure: keep the last state
			}
			h.update(k, st)
		}
	}
}

// hasUnknown reports whether a key was added whose state the hub has not
// read yet.
func (h *watchHub) hasUnknown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, wd := range h.keys {
		if !wd.known {
			return true
		}
	}
	return false
}

// update records key's state and signals its subscribers when it changed.
func (h *watchHub) update(key watchKey, st watchState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wd := h.keys[key]
	if wd == nil {
		return
	}
	if wd.known && wd.state == st {
		return
	}
	wd.state, wd.known = st, true
	for ch := range wd.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// read returns what key's environment serves now. The read is made as a
// viewer of the key's workspace and user with access to every project:
// each subscriber's own access was checked when it subscribed.
func (h *watchHub) read(ctx context.Context, key watchKey) (watchState, error) {
	p := &canvas.Principal{WorkspaceID: key.workspaceID, UserID: key.userID, Role: canvas.RoleViewer}
	return readWatchState(canvas.NewContext(ctx, p), h.envs, key)
}

// readWatchState reads what key's environment serves for the principal of
// ctx: of a split, the version key's assignment key gets, or the split as
// a whole without one. NOT_FOUND is a state (Gone), not an error.
func readWatchState(ctx context.Context, envs *env.Service, key watchKey) (watchState, error) {
	sv, err := envs.ActiveVersionServed(ctx, env.ActiveVersionParams{CanvasID: key.canvasID, EnvName: key.envName,
		AssignmentKey: key.assignmentKey, Stable: true})
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return watchState{Gone: true, Code: canvas.ENOTFOUND, Message: canvas.ErrorMessage(err)}, nil
	}
	if err != nil {
		return watchState{}, err
	}
	st := watchState{ETag: sv.ETag, PublicationID: sv.PublicationID}
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(sv.JSON, &v); err != nil {
		return watchState{}, err
	}
	st.VersionID = v.ID
	return st, nil
}

// state returns key's last known state, and whether the hub has read it.
func (h *watchHub) state(key watchKey) (watchState, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wd := h.keys[key]
	if wd == nil {
		return watchState{}, false
	}
	return wd.state, wd.known
}
