package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// DefaultOwnerLease is how long a process's hold on its keys lasts without
// a renewal: the longest a killed process keeps a key in progress.
const DefaultOwnerLease = 15 * time.Second

// Owner is one process's claim on the keys it reserves. While at least one
// request holds a key (Hold), the Owner renews its lease in the store every
// third of the lease, so that the keys stay reserved as long as the process
// lives and are released by the store once it dies and the lease lapses.
// An Owner without holds does nothing. Its ID is new for every Owner, so a
// restarted process never holds the keys of its previous life.
type Owner struct {
	id    string
	store Store
	lease time.Duration

	mu      sync.Mutex
	holds   int
	renewed time.Time // the start of the last renewal, by the local clock
	stop    chan struct{}
}

// NewOwner returns an Owner with a new random ID whose lease lasts lease
// (DefaultOwnerLease when zero or negative).
func NewOwner(store Store, lease time.Duration) *Owner {
	if lease <= 0 {
		lease = DefaultOwnerLease
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &Owner{id: hex.EncodeToString(b[:]), store: store, lease: lease}
}

// ID identifies the owner in Reservation.Owner and Record.Owner.
func (o *Owner) ID() string { return o.id }

// Lease is how long the owner's hold lasts without a renewal.
func (o *Owner) Lease() time.Duration { return o.lease }

// Hold records that a request is about to hold a key, and returns once the
// owner's lease is live in the store. The returned release ends the hold;
// the renewals stop with the last hold. An error means the lease could not
// be renewed, and nothing is held.
func (o *Owner) Hold(ctx context.Context) (release func(), err error) {
	o.mu.Lock()
	o.holds++
	if o.holds == 1 {
		o.stop = make(chan struct{})
		go o.renewLoop(o.stop)
	}
	fresh := !o.renewed.IsZero() && time.Since(o.renewed) < o.lease/3
	o.mu.Unlock()
	release = sync.OnceFunc(o.release)
	if !fresh {
		if err := o.renew(ctx); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

func (o *Owner) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.holds--
	if o.holds == 0 {
		close(o.stop)
		o.stop = nil
	}
}

// renew extends the lease and notes when, for Hold's freshness check.
func (o *Owner) renew(ctx context.Context) error {
	start := time.Now()
	if err := o.store.RenewIdempotencyOwner(ctx, o.id, o.lease); err != nil {
		return err
	}
	o.mu.Lock()
	if start.After(o.renewed) {
		o.renewed = start
	}
	o.mu.Unlock()
	return nil
}

// renewLoop renews the lease every third of it until stop is closed. A
// failed renewal is tried again at the next tick; the lease covers two
// misses.
func (o *Owner) renewLoop(stop chan struct{}) {
	t := time.NewTicker(o.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), o.lease/3)
			_ = o.renew(ctx)
			cancel()
		}
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying the reservation r, for the work of r's
// request: a store that writes that work records the id of the record it
// creates as r's RefID in the same transaction, so that the reservation
// says whether the work committed. Only the first such write of a
// reservation is recorded.
func NewContext(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext returns the reservation NewContext put in ctx, or nil.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(ctxKey{}).(*Record)
	return r
}
