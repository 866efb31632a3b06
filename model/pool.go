package model

import (
	"context"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// pool keeps the providers built for workspace credentials, one per
// credential, rebuilt when the credential changes, and the slots that
// bound each credential's calls in flight.
type pool struct {
	kinds Kinds
	mu    sync.Mutex
	built map[string]*pooled // by credential id
}

type pooled struct {
	updated  time.Time
	provider Provider
	slots    chan struct{}
	timeout  time.Duration
}

func newPool(kinds Kinds) *pool {
	return &pool{kinds: kinds, built: make(map[string]*pooled)}
}

// get opens the credential id of workspaceID, returns its provider (built
// again when the credential changed since), waits for one of its slots and
// returns the function that frees it, with the credential's call timeout.
// Waiting ends with ctx.
func (p *pool) get(ctx context.Context, creds Credentials, workspaceID, id string) (Provider, func(), time.Duration, error) {
	cred, updated, err := creds.Open(ctx, workspaceID, id)
	if err != nil {
		return nil, nil, 0, err
	}
	e, err := p.entry(cred, updated)
	if err != nil {
		return nil, nil, 0, err
	}
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, 0, &canvas.Error{Code: canvas.ECANCELLED,
			Message: "The caller went away while the credential's calls were all in flight.", Err: ctx.Err()}
	}
	return e.provider, func() { <-e.slots }, e.timeout, nil
}

// entry returns the pooled provider of cred as it was at updated.
func (p *pool) entry(cred *Credential, updated time.Time) (*pooled, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.built[cred.ID]; ok && e.updated.Equal(updated) {
		return e, nil
	}
	factory, ok := p.kinds[cred.Provider]
	if !ok {
		return nil, canvas.Errorf(canvas.EPROVIDER, "This server has no %s provider for credential %q.", cred.Provider, cred.Name)
	}
	prov, err := factory(*cred)
	if err != nil {
		return nil, err
	}
	e := &pooled{updated: updated, provider: withoutKey(prov, cred.APIKey), timeout: cred.Settings.Timeout(),
		slots: make(chan struct{}, cred.Settings.Concurrency())}
	if old, ok := p.built[cred.ID]; ok && cap(old.slots) == cap(e.slots) {
		// The calls in flight on the old state still count.
		e.slots = old.slots
	}
	p.built[cred.ID] = e
	return e, nil
}
