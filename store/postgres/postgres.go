// Package postgres is the Store for several processes: PostgreSQL through
// github.com/jackc/pgx/v5 (pgxpool), so that any number of canvasd
// replicas share one database, its queue and its caches' change signal.
//
// Transactions run at READ COMMITTED, Postgres's default, and take
// explicit row locks where an invariant spans statements: a publish locks
// its environment's row (publication.go), a claim locks the jobs it takes
// with FOR UPDATE SKIP LOCKED (sqlstore/claim.go), and the few check-then-insert
// writes (an idempotency key, a scheduled job) take a transaction-scoped
// advisory lock on what they check. A transaction that fails with a
// serialization failure or a deadlock is run again from the start, with a
// fresh clock reading; reads of several statements run in a REPEATABLE
// READ, READ ONLY transaction, so that they see one snapshot.
//
// Errors are translated by SQLSTATE, never by message text (translate).
// The schema is applied by embedded, numbered migrations under an
// advisory lock, so that replicas starting at once apply each migration
// once (migrate.go).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

// Compile-time check that DB implements the whole Store.
var _ store.Store = (*DB)(nil)

// DB is the Postgres store: the shared SQL (sqlstore.Store) on a pool of
// connections that several processes may share.
type DB struct {
	*sqlstore.Store

	pool *pgxpool.Pool
	// rebound caches the shared queries numbered for Postgres (core.go).
	rebound sync.Map
	// listener turns the notifications of enqueued jobs into wake-ups
	// (notify.go); it connects on the first subscription.
	listener *listener

	closeOnce sync.Once

	// Now is the clock; it is read once per transaction.
	Now canvas.Clock
	// Observer, when set, watches write transactions.
	Observer store.Observer
	// NewID returns new ids.
	NewID func() string
}

// DefaultMaxConns is the size of the connection pool when the connection
// string does not set pool_max_conns. A connection is held only for a
// statement or a transaction, never while a model or a webhook answers.
const DefaultMaxConns = 16

// Open connects to the database dsn names (a postgres:// URL or a
// key=value connection string; pool settings such as pool_max_conns are
// read from it) and applies every pending migration. Besides the pool, a
// DB holds one connection while a worker is subscribed to wake-ups
// (WakeOnEnqueue).
func Open(ctx context.Context, dsn string) (*DB, error) { return openBefore(ctx, dsn, "") }

// openBefore is Open applying only the migrations whose names sort before
// stop, or all of them when stop is empty: a test builds a database as an
// older release left it.
func openBefore(ctx context.Context, dsn, stop string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.AfterConnect = afterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := &DB{
		pool:  pool,
		Now:   func() time.Time { return time.Now().UTC() },
		NewID: uuid.NewString,
	}
	db.Store = sqlstore.New(txRunner{db}, sqlstore.Postgres, func() store.Observer { return db.Observer })
	db.listener = newListener(cfg.ConnConfig)
	if err := db.migrateBefore(ctx, stop); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	return db, nil
}

// afterConnect prepares each new connection: timestamps scan in UTC, as
// they were written.
func afterConnect(_ context.Context, conn *pgx.Conn) error {
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
		Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
	return nil
}

// Pool returns the connection pool, for tools that read or write the
// database directly (a copy between stores, for instance).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close stops the listener and closes the pool, waiting for the
// connections in use to be released. Calls after the first do nothing.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.listener.close()
		db.pool.Close()
	})
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// Tx is a transaction with the time fixed once for all it writes.
type Tx struct {
	pgx.Tx
	db  *DB
	now time.Time
	// notified is set once the transaction notified jobsChannel
	// (notify.go).
	notified bool
}

// maxAttempts bounds how many times a transaction that failed with a
// serialization failure or a deadlock is run.
const maxAttempts = 5

// write runs fn in a read-write transaction and commits it. The clock is
// read once per attempt; fn may run more than once (after a serialization
// failure or a deadlock, which roll everything back), so it must leave
// nothing behind but what it writes through tx and what it sets on the
// values it was given. Each commit is reported to the Observer.
func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.runTx(ctx, pgx.TxOptions{}, true, fn)
		if !retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
	}
}

// read runs fn in a read-only transaction of one snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.runTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
		if !retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
	}
}

// runTx runs fn in one transaction of opts and commits it when fn
// succeeds; observe reports the commit to the Observer.
func (db *DB) runTx(ctx context.Context, opts pgx.TxOptions, observe bool, fn func(tx *Tx) error) error {
	begun := time.Now()
	ptx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return translate(err)
	}
	tx := &Tx{Tx: ptx, db: db, now: instant(db.Now())}
	if err := fn(tx); err != nil {
		rollback(ptx)
		return err
	}
	err = translate(ptx.Commit(ctx))
	if o := db.Observer; o != nil && observe {
		o.Committed(store.Commit{System: "postgresql", Name: "write", Writes: []context.Context{ctx},
			Start: begun, Duration: time.Since(begun), Err: err})
	}
	return err
}

// rollback rolls ptx back with a context of its own, so that a cancelled
// caller does not leave the connection in a transaction. Its error is
// not the caller's: pgx closes a connection whose rollback failed, and the
// pool replaces it.
func rollback(ptx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ptx.Rollback(ctx)
}

// SQLSTATE codes the store acts on.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// retryable reports whether err rolled back a transaction that may simply
// be run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == codeSerializationFailure || pe.Code == codeDeadlockDetected
	}
	return false
}

// translate turns driver errors into domain errors by SQLSTATE, never by
// message text: a unique violation is CONFLICT, a foreign-key violation
// (a reference to a row that does not exist) is NOT_FOUND. pgx.ErrNoRows
// is left for callers to name what was not found.
func translate(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return &canvas.Error{Code: canvas.ECONFLICT, Message: "The resource already exists.", Err: err}
		case codeForeignKeyViolation:
			return &canvas.Error{Code: canvas.ENOTFOUND, Message: "A referenced resource does not exist.", Err: err}
		}
	}
	return err
}

// instant is t as the store keeps it: UTC, truncated to the microsecond
// (Postgres's precision), so that what a write returns equals what a read
// returns.
func instant(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// nullInstant is the column value of an optional timestamp.
func nullInstant(t *time.Time) any {
	if t == nil {
		return nil
	}
	return instant(*t)
}
