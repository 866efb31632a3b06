// Package idempotency makes a retried POST safe: a request carrying an
// Idempotency-Key header runs once, and a retry with the same key and the
// same request gets the first answer again instead of running a second
// time.
//
// A key belongs to a workspace. It is reserved before the request runs and
// completed with the response afterwards; a reservation that is still in
// progress, or a key reused for a different request, is CONFLICT. Keys live
// for TTL; an expired key is replaced by the next request that uses it.
//
// A key in progress never outlives the process that holds it: each
// reservation names its Owner, whose lease the process renews while it
// holds keys, and a reservation whose owner's lease has lapsed is released.
// The work a request commits records its id on the reservation in the same
// transaction (NewContext), so that a retry after a crash answers from that
// work instead of doing it twice. A process that knows the earlier holders
// are dead (the only server of a SQLite data directory, at its start)
// releases their keys at once (Service.ReleaseOthers) instead of waiting for
// their leases.
//
// Service is what a server calls: it reserves, completes and releases keys
// in the name of its process's Owner, and says how long a caller refused
// because a key is in progress should wait (Service.InProgress).
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// TTL is how long a key is remembered.
const TTL = 24 * time.Hour

// Abandoned is how long a reservation that names no owner may stay in
// progress before a retry may take the key over: long enough for the
// slowest synchronous completion, short enough that a server that stopped
// mid-request does not block retries for a day. Reservations with an owner
// are held for as long as the owner's lease instead.
const Abandoned = 15 * time.Minute

// MaxKeyLength bounds a key.
const MaxKeyLength = 255

// Record is a key's state: in progress while Status is zero, completed with
// the response it keeps afterwards.
type Record struct {
	WorkspaceID string
	Key         string
	// RequestHash identifies the request the key was first used with (see
	// Hash).
	RequestHash string
	// Status, ContentType and Body are the saved response; Status is zero
	// while the request is in progress.
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	CompletedAt *time.Time
	// Owner is the process that holds the key while the request runs (an
	// Owner's ID); empty when the caller named none.
	Owner string
	// RefID is the id of the record the request's work wrote, saved with
	// that work in its own transaction (see NewContext). On a record in
	// progress it means the work committed although no answer was kept.
	RefID string
	// Orphaned is set by ReserveIdempotencyKey on the in-progress record
	// it returns when the record's owner is gone but its work committed
	// (RefID): no process will complete it, and the caller answers from
	// RefID instead of running the request again.
	Orphaned bool
	// HeldUntil is set by ReserveIdempotencyKey on an in-progress record
	// it returns that is still held, by the store's clock: the end of its
	// owner's lease, or CreatedAt plus Reservation.Abandoned for a record
	// that names no owner. It is zero when the store cannot tell.
	HeldUntil time.Time
}

// Completed reports whether the record holds a response.
func (r *Record) Completed() bool { return r.Status != 0 }

// Reservation says when an existing record no longer holds its key.
type Reservation struct {
	// TTL is how long a key is remembered: an older record is replaced.
	// Zero replaces every existing record.
	TTL time.Duration
	// Abandoned is how long a record that names no owner may stay in
	// progress: an older one (its server stopped while it ran) is gone.
	// Zero means never (until TTL).
	Abandoned time.Duration
	// Owner is the process reserving the key (Owner.ID), recorded with the
	// reservation. A record in progress is gone once its owner's lease
	// has lapsed (see RenewIdempotencyOwner), whatever its age.
	Owner string
}

// Store is the persistence of idempotency keys. Times are the store's own
// clock, so that expiry is decided where the key is kept.
type Store interface {
	// ReserveIdempotencyKey reserves r's (WorkspaceID, Key) for r, in
	// progress and owned by res.Owner, unless a record of that key exists
	// that res does not let it replace. It returns nil when it reserved
	// the key (setting r.CreatedAt, which identifies the reservation), and
	// the existing record otherwise.
	//
	// An existing record is replaced when it is older than res.TTL, or
	// when it is in progress, gone (its owner's lease has lapsed, or it
	// names no owner and is older than res.Abandoned) and its work never
	// committed (no RefID). A gone record whose work committed is returned
	// with Orphaned set.
	ReserveIdempotencyKey(ctx context.Context, r *Record, res Reservation) (*Record, error)
	// CompleteIdempotencyKey saves r's Status, ContentType and Body as
	// the response of the reservation r (same key and CreatedAt, still in
	// progress). A reservation that is gone (it was released or replaced)
	// is NOT_FOUND.
	CompleteIdempotencyKey(ctx context.Context, r *Record) error
	// ReleaseIdempotencyKey forgets the reservation r if it is still in
	// progress, so that a retry runs again (its request failed without an
	// answer worth keeping). Anything else is left as it is.
	ReleaseIdempotencyKey(ctx context.Context, r *Record) error
	// RenewIdempotencyOwner makes owner's lease end lease from now (by the
	// store's clock): the records it holds in progress are held until
	// then.
	RenewIdempotencyOwner(ctx context.Context, owner string, lease time.Duration) error
	// ReleaseIdempotencyOwners ends the lease of every owner but except,
	// as when the processes that hold keys are known to be dead: of the
	// records they hold in progress, one whose work committed (RefID) is
	// returned Orphaned by the next reservation of its key, so that the
	// retry answers from that work, and any other is deleted, so that the
	// retry runs anew. Completed records, records that name no owner and
	// except's records are left as they are.
	ReleaseIdempotencyOwners(ctx context.Context, except string) error
}

// Hash identifies a request for its key: the SHA-256 of the method, the
// path and the body. A JSON body is canonicalized first (object keys
// sorted, insignificant white space removed, numbers kept as written), so
// that the same document sent with different formatting is the same
// request; any other body is hashed as it is.
func Hash(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(canonicalJSON(body))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON returns body re-encoded with sorted keys when it is one
// JSON document, and body itself otherwise.
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return body
	}
	return buf.Bytes()
}

// ValidKey reports whether key can be used: 1 to MaxKeyLength printable
// ASCII characters.
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}
