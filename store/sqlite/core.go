package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

// txRunner runs the shared code's transactions (sqlstore.Driver) on the DB:
// reads on the reader pool, writes on the one writer, those of a group in
// shared commits (commit.go).
type txRunner struct{ db *DB }

var _ sqlstore.Driver = txRunner{}

// Read runs fn in a read-only transaction of one snapshot.
func (d txRunner) Read(ctx context.Context, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	tx, err := d.db.beginRead(ctx)
	if err != nil {
		return err
	}
	return commitAfter(ctx, tx, fn)
}

// ReadAlone runs fn on the reader pool outside any transaction, each
// statement by itself, prepared when it is hot.
func (d txRunner) ReadAlone(ctx context.Context, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	return fn(ctx, &sqlstore.Tx{Conn: poolConn{d.db}, Now: d.db.Now().UTC(), NewID: d.db.NewID})
}

// Write runs fn in a write transaction: a commit shared with the other
// writes of group g waiting at the time, or one of its own.
func (d txRunner) Write(ctx context.Context, g sqlstore.Group, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	if c := d.db.committer(g); c != nil {
		return d.db.groupCommit(ctx, c, func(ctx context.Context, tx *Tx) error { return fn(ctx, tx.shared()) })
	}
	tx, err := d.db.beginWrite(ctx)
	if err != nil {
		return err
	}
	return commitAfter(ctx, tx, fn)
}

// commitAfter runs fn in tx and commits tx when fn succeeds; otherwise tx
// is rolled back.
func commitAfter(ctx context.Context, tx *Tx, fn func(ctx context.Context, tx *sqlstore.Tx) error) error {
	defer tx.Rollback()
	if err := fn(ctx, tx.shared()); err != nil {
		return err
	}
	return tx.Commit()
}

// committer returns the committer of group g, nil for a write that
// commits alone.
func (db *DB) committer(g sqlstore.Group) *committer {
	switch g {
	case sqlstore.Publishes:
		return &db.publishCommits
	case sqlstore.Runs:
		return &db.runCommits
	case sqlstore.Jobs:
		return &db.jobCommits
	case sqlstore.Workflows:
		return &db.workflowCommits
	}
	return nil
}

// shared returns tx as the shared code uses it.
func (tx *Tx) shared() *sqlstore.Tx {
	return &sqlstore.Tx{Conn: conn{tx}, Now: tx.now, NewID: tx.db.NewID}
}

// conn is a Tx as a sqlstore.Conn: it binds the shared code's values as
// SQLite keeps them and scans them back.
type conn struct{ tx *Tx }

func (c conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := c.tx.exec(ctx, q, bind(args)...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (c conn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.tx.query(ctx, q, bind(args)...)
	if err != nil {
		return nil, translate(err)
	}
	return sqlRows{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return sqlRow{c.tx.queryRow(ctx, q, bind(args)...)}
}

// Lock does nothing: the one writer serializes writes.
func (conn) Lock(context.Context, string) error { return nil }

// JobDue does nothing: no other process shares the queue; the engine
// wakes its own worker.
func (conn) JobDue(context.Context) error { return nil }

// poolConn is the reader pool as a sqlstore.Conn, for reads of one
// statement: each runs by itself, prepared when it is hot.
type poolConn struct{ db *DB }

func (c poolConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := c.db.read.ExecContext(ctx, q, bind(args)...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (c poolConn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	var rows *sql.Rows
	var err error
	if s := c.db.readStmts[q]; s != nil {
		rows, err = s.QueryContext(ctx, bind(args)...)
	} else {
		rows, err = c.db.read.QueryContext(ctx, q, bind(args)...)
	}
	if err != nil {
		return nil, translate(err)
	}
	return sqlRows{rows}, nil
}

func (c poolConn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	if s := c.db.readStmts[q]; s != nil {
		return sqlRow{s.QueryRowContext(ctx, bind(args)...)}
	}
	return sqlRow{c.db.read.QueryRowContext(ctx, q, bind(args)...)}
}

// Lock does nothing, as in a transaction.
func (poolConn) Lock(context.Context, string) error { return nil }

// JobDue does nothing, as in a transaction.
func (poolConn) JobDue(context.Context) error { return nil }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Scan(dest ...any) error { return r.Rows.Scan(scanInto(dest)...) }

func (r sqlRows) Close() { r.Rows.Close() }

type sqlRow struct{ *sql.Row }

func (r sqlRow) Scan(dest ...any) error { return translate(r.Row.Scan(scanInto(dest)...)) }

// bind returns args as SQLite binds them: instants as fixed-width UTC
// text (NULL for a nil *time.Time), lists of ids as JSON arrays.
func bind(args []any) []any { return sqlstore.Convert(args, bindValue) }

func bindValue(a any) (any, bool) {
	switch a := a.(type) {
	case time.Time:
		return formatTime(a), true
	case *time.Time:
		return nullTime(a), true
	case sqlstore.IDs:
		return idList(a), true
	}
	return nil, false
}

// scanInto returns dest with its instants read from SQLite's text.
func scanInto(dest []any) []any { return sqlstore.Convert(dest, scanDest) }

func scanDest(d any) (any, bool) {
	switch d := d.(type) {
	case *time.Time:
		return timeCol{d}, true
	case **time.Time:
		return nullTimeCol{d}, true
	}
	return nil, false
}
