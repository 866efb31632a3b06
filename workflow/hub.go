package workflow

import (
	"context"
	"sync"
	"time"
)

// hub wakes the callers waiting on runs of this process when their status
// changes; runs changed by other processes are seen by polling.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// subscribe returns a channel closed at the next wake of run id, and the
// function that unsubscribes it.
func (h *hub) subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[chan struct{}]struct{}{}
	}
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]struct{}{}
	}
	h.subs[id][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if set := h.subs[id]; set != nil {
			if _, ok := set[ch]; ok {
				delete(set, ch)
				if len(set) == 0 {
					delete(h.subs, id)
				}
			}
		}
	}
}

// wake wakes every subscriber of run id.
func (h *hub) wake(id string) {
	h.mu.Lock()
	set := h.subs[id]
	delete(h.subs, id)
	h.mu.Unlock()
	for ch := range set {
		close(ch)
	}
}

// wait returns run id of the workspace once it has ended or paused, or
// ctx's error.
func (s *Service) wait(ctx context.Context, workspaceID, id string) (*Run, error) {
	for {
		woken, stop := s.waiters.subscribe(id)
		run, err := s.store.GetWorkflowRun(ctx, workspaceID, id)
		if err != nil || Terminal(run.Status) || Paused(run.Status) {
			stop()
			return run, err
		}
		t := time.NewTimer(s.poll)
		select {
		case <-woken:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}
