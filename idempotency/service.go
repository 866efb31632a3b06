package idempotency

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Options configure a Service. Store is required.
type Options struct {
	// Store keeps the keys.
	Store Store
	// Lease is how long the process's hold on its keys lasts without a
	// renewal (DefaultOwnerLease when zero or negative).
	Lease time.Duration
	// Now is the clock Retry-After is computed with; nil means time.Now.
	Now canvas.Clock
}

// Service reserves, completes and releases Idempotency-Keys in the name of
// one process (its Owner), with the TTL and Abandoned rules of this
// package. It is safe for concurrent use.
type Service struct {
	store Store
	owner *Owner
	now   canvas.Clock
}

// NewService returns a Service with a new Owner over opts.Store.
func NewService(opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{store: opts.Store, owner: NewOwner(opts.Store, opts.Lease), now: opts.Now}
}

// Owner is the process's claim on the keys the Service reserves.
func (s *Service) Owner() *Owner { return s.owner }

// Hold makes the process's lease live for a request about to hold a key
// (see Owner.Hold); the request calls release once it holds none.
func (s *Service) Hold(ctx context.Context) (release func(), err error) {
	return s.owner.Hold(ctx)
}

// Reserve reserves r's key in the name of the Service's owner, for TTL. It
// returns nil when r now holds the key, and the record that keeps it
// otherwise: completed (answer from it), in progress (InProgress), or
// Orphaned (its holder died after its work committed: answer from RefID).
func (s *Service) Reserve(ctx context.Context, r *Record) (*Record, error) {
	return s.store.ReserveIdempotencyKey(ctx, r, Reservation{TTL: TTL, Abandoned: Abandoned, Owner: s.owner.ID()})
}

// Complete keeps r's Status, ContentType and Body as the answer of the
// reservation r. A reservation that is gone is NOT_FOUND.
func (s *Service) Complete(ctx context.Context, r *Record) error {
	return s.store.CompleteIdempotencyKey(ctx, r)
}

// Release forgets the reservation r if it is still in progress, so that a
// retry runs the request again.
func (s *Service) Release(ctx context.Context, r *Record) error {
	return s.store.ReleaseIdempotencyKey(ctx, r)
}

// ReleaseOthers releases at once the keys every other process holds in
// progress (see Store.ReleaseIdempotencyOwners): a key whose work committed
// answers its retry from that work, any other is free. Only a process that
// knows no other process holding keys is alive may call it, such as the
// server of a SQLite data directory that holds the directory's lock.
func (s *Service) ReleaseOthers(ctx context.Context) error {
	return s.store.ReleaseIdempotencyOwners(ctx, s.owner.ID())
}

// RetryAfter is how long a caller refused because rec is in progress
// should wait before trying again: until rec's hold ends (HeldUntil), at
// least a second.
func (s *Service) RetryAfter(rec *Record) time.Duration {
	if rec.HeldUntil.IsZero() {
		return time.Second
	}
	return max(rec.HeldUntil.Sub(s.now()), time.Second)
}

// InProgress is the CONFLICT answer to a request whose key rec is in
// progress, carrying RetryAfter (canvas.WithRetryAfter).
func (s *Service) InProgress(rec *Record) error {
	return canvas.WithRetryAfter(canvas.Errorf(canvas.ECONFLICT,
		"A request with this Idempotency-Key is in progress."), s.RetryAfter(rec))
}
