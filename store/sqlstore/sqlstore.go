// Package sqlstore is the SQL both stores share: the queries, scanners and
// side effects of every area of the Store, written once, over a small seam
// that each driver (store/sqlite, store/postgres) fills.
//
// The seam is a transaction (Conn), a way to run one (Driver), and the few
// words of SQL that differ (Dialect). Queries are written with ? for their
// parameters; the Postgres driver numbers them ($1, $2, ...) once per
// query text (Rebind). Values are plain Go values: a time.Time or a
// *time.Time (nil for NULL), a bool, a string, an int, []byte, IDs for a
// list of ids, JSON as text. Each driver turns them into what its database
// keeps (SQLite: fixed-width UTC text for instants; Postgres: timestamptz
// truncated to the microsecond) and scans them back into the same Go
// types, so that the shared code never sees a difference.
//
// What really differs stays in the drivers: how a write commits (group
// commit on SQLite's one writer; a retry after a serialization failure on
// Postgres), the change signal, LISTEN/NOTIFY, blobs and migrations.
package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/promptcanvas/promptcanvas/store"
)

// ErrNoRows is what Row.Scan returns when the query selected no row, on
// either driver.
var ErrNoRows = sql.ErrNoRows

// Row is the one row of a query, scanned once.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query; Close releases them and may be called
// more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Conn is a driver's open transaction. Its errors are translated by the
// driver: a unique violation is CONFLICT, a foreign-key violation
// NOT_FOUND, no row ErrNoRows.
type Conn interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Lock takes a lock on key until the transaction ends, so that
	// check-then-insert writes of one key take turns across processes. A
	// driver whose writes are serialized already does nothing.
	Lock(ctx context.Context, key string) error
	// JobDue tells the driver that the transaction wrote a job due now, so
	// that workers of other processes are woken at its commit. A driver
	// of one process does nothing.
	JobDue(ctx context.Context) error
}

// Tx is a transaction as the shared code uses it: the driver's Conn, with
// the time fixed once for all it writes.
type Tx struct {
	Conn
	// Now is the transaction's one clock reading, at the store's
	// precision.
	Now time.Time
	// NewID returns a new id.
	NewID func() string
}

// Group names writes that may share a commit with others of their kind
// (SQLite's group commit); a driver that commits each write alone ignores
// it.
type Group int

// The groups of writes.
const (
	// Alone is a write that commits by itself.
	Alone Group = iota
	// Publishes are publishes and promotions.
	Publishes
	// Runs are run records, their jobs, starts and ends.
	Runs
	// Jobs are the outcomes of queue jobs.
	Jobs
	// Workflows are the step states of workflow runs.
	Workflows
)

// Driver runs transactions on a database.
type Driver interface {
	// Read runs fn in a read-only transaction of one snapshot.
	Read(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error
	// ReadAlone runs fn outside any transaction: each statement runs by
	// itself, for a read of one statement, which needs no snapshot of
	// several and so saves the transaction's begin and end. fn only reads.
	ReadAlone(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error
	// Write runs fn in a write transaction and commits it; it returns once
	// the commit is durable. fn may run more than once (a Postgres
	// serialization failure rolls everything back and runs it again), so
	// it leaves nothing behind but what it writes through tx and what it
	// sets on the values it was given; it may run under a savepoint of a
	// commit that other writes of its group share, and must then leave tx
	// as it found it when it fails. ctx is the one fn must use: it carries
	// the caller's values, and the shared commit's deadline.
	Write(ctx context.Context, g Group, fn func(ctx context.Context, tx *Tx) error) error
}

// Store is the shared half of both stores: the methods of store.Store
// written once. A driver embeds it and adds what differs.
type Store struct {
	db Driver
	d  Dialect
	// claim holds the claim's statements in d.
	claim claimQueries
	// observer, when it returns one, gives a new job its trace context.
	observer func() store.Observer
}

// New returns the shared Store over a driver of dialect d; observer
// returns the driver's Observer at the time of a call (nil for none).
func New(db Driver, d Dialect, observer func() store.Observer) *Store {
	return &Store{db: db, d: d, claim: d.claimQueries(), observer: observer}
}

// Dialect is the dialect of the Store's database.
func (s *Store) Dialect() Dialect { return s.d }

// read runs fn in a read-only transaction.
func (s *Store) read(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	return s.db.Read(ctx, fn)
}

// readAlone runs fn, a read of one statement, outside any transaction.
func (s *Store) readAlone(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	return s.db.ReadAlone(ctx, fn)
}

// write runs fn in a write transaction of group g.
func (s *Store) write(ctx context.Context, g Group, fn func(ctx context.Context, tx *Tx) error) error {
	return s.db.Write(ctx, g, fn)
}
