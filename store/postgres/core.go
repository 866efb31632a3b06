package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

// txRunner runs the shared code's transactions (sqlstore.Driver) on the
// pool: each write by itself, run again after a serialization failure or
// a deadlock.
type txRunner struct{ db *DB }

var _ sqlstore.Driver = txRunner{}

// Read runs fn in a read-only transaction of one snapshot.
func (d txRunner) Read(ctx context.Context, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	return d.db.read(ctx, func(tx *Tx) error { return fn(ctx, tx.shared()) })
}

// ReadAlone runs fn on the pool outside any transaction, each statement by
// itself on a connection of the pool.
func (d txRunner) ReadAlone(ctx context.Context, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	return fn(ctx, &sqlstore.Tx{Conn: poolConn{d.db}, Now: instant(d.db.Now()), NewID: d.db.NewID})
}

// Write runs fn in a read-write transaction; Postgres has no group commit
// to share, so g is not used.
func (d txRunner) Write(ctx context.Context, _ sqlstore.Group, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	return d.db.write(ctx, func(tx *Tx) error { return fn(ctx, tx.shared()) })
}

// shared returns tx as the shared code uses it.
func (tx *Tx) shared() *sqlstore.Tx {
	return &sqlstore.Tx{Conn: conn{tx}, Now: tx.now, NewID: tx.db.NewID}
}

// rebind numbers the parameters of q for Postgres, once per query text.
func (db *DB) rebind(q string) string {
	if r, ok := db.rebound.Load(q); ok {
		return r.(string)
	}
	r := sqlstore.Rebind(q)
	db.rebound.Store(q, r)
	return r
}

// conn is a Tx as a sqlstore.Conn: it numbers the shared code's
// parameters and binds its values as Postgres keeps them.
type conn struct{ tx *Tx }

func (c conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, c.tx.db.rebind(q), bind(args)...)
	if err != nil {
		return 0, translate(err)
	}
	return tag.RowsAffected(), nil
}

func (c conn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.tx.Query(ctx, c.tx.db.rebind(q), bind(args)...)
	if err != nil {
		return nil, translate(err)
	}
	return pgRows{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return pgRow{c.tx.QueryRow(ctx, c.tx.db.rebind(q), bind(args)...)}
}

// Lock takes a transaction-scoped advisory lock on the text key: the
// check-then-write transactions of one key, in any processes, take turns.
func (c conn) Lock(ctx context.Context, key string) error {
	_, err := c.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// JobDue makes the transaction notify the listening workers at its
// commit (notify.go).
func (c conn) JobDue(ctx context.Context) error { return notifyJob(ctx, c.tx) }

// poolConn is the pool as a sqlstore.Conn, for reads of one statement:
// each runs by itself on a connection of the pool.
type poolConn struct{ db *DB }

func (c poolConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.db.pool.Exec(ctx, c.db.rebind(q), bind(args)...)
	if err != nil {
		return 0, translate(err)
	}
	return tag.RowsAffected(), nil
}

func (c poolConn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.db.pool.Query(ctx, c.db.rebind(q), bind(args)...)
	if err != nil {
		return nil, translate(err)
	}
	return pgRows{rows}, nil
}

func (c poolConn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return pgRow{c.db.pool.QueryRow(ctx, c.db.rebind(q), bind(args)...)}
}

// Lock refuses: a transaction-scoped lock needs a transaction.
func (poolConn) Lock(context.Context, string) error {
	return errors.New("postgres: a lock outside a transaction")
}

// JobDue does nothing: a read writes no job.
func (poolConn) JobDue(context.Context) error { return nil }

type pgRows struct{ pgx.Rows }

func (r pgRows) Err() error { return translate(r.Rows.Err()) }

type pgRow struct{ pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return translate(err)
}

// bind returns args as Postgres keeps them: instants truncated to the
// microsecond, lists of ids as text[].
func bind(args []any) []any { return sqlstore.Convert(args, bindValue) }

func bindValue(a any) (any, bool) {
	switch a := a.(type) {
	case time.Time:
		return instant(a), true
	case *time.Time:
		return nullInstant(a), true
	case sqlstore.IDs:
		return ids(a), true
	}
	return nil, false
}

// ids is a list of ids as a text[] parameter (= ANY($n)); never NULL.
func ids(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
