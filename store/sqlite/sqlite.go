// Package sqlite is the embedded Store: SQLite through modernc.org/sqlite, a
// pure-Go driver, so the service needs no cgo and no server.
//
// The database runs in WAL mode with synchronous=FULL, so that an
// acknowledged write survives a crash or power loss. One connection writes
// and a pool of connections reads, which matches SQLite's single-writer
// model and keeps writers from failing with SQLITE_BUSY. Concurrent
// publishes, run records, job outcomes and workflow step states share
// commits (group commit, commit.go), so that they are not capped by the
// disk's commit rate.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Compile-time check that DB implements the whole Store.
var _ store.Store = (*DB)(nil)

// DB is the SQLite store: the shared SQL (sqlstore.Store) on SQLite's
// one writer and pool of readers.
type DB struct {
	*sqlstore.Store

	write *sql.DB // one connection: every transaction that writes
	read  *sql.DB // a pool: reads

	// writeStmts and readStmts hold the hot statements (stmts.go),
	// prepared once per pool at Open; they are read-only afterwards.
	writeStmts map[string]*sql.Stmt
	readStmts  map[string]*sql.Stmt

	// closed is set by Close: grouped writes made afterwards fail with
	// errClosed.
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// dataVersion is the dedicated connection behind DataVersion
	// (dataversion.go).
	dataVersion *dataVersion

	// publishCommits, runCommits, jobCommits and workflowCommits group the
	// commits of the writes of each sqlstore.Group: publishes, run records
	// (their jobs, starts and ends), the claims and outcomes of queue jobs, and the
	// step states of workflow runs. See commit.go.
	publishCommits  committer
	runCommits      committer
	jobCommits      committer
	workflowCommits committer

	// Now is the clock; it is read once per transaction.
	Now canvas.Clock
	// Observer, when set, watches write transactions (observe.go).
	Observer Observer
	// NewID returns new ids.
	NewID func() string
}

// Open opens (creating when missing) the database file at path and applies
// every pending migration.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dsn := func(readOnly bool) string {
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(ON)")
		// Statement and savepoint journals in memory: they only undo a
		// statement or a savepoint inside a transaction (the WAL makes
		// commits durable), and a grouped commit runs each write under a
		// savepoint, which would otherwise write the pages it changes to a
		// temporary file first.
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Set("_txlock", "immediate")
		if readOnly {
			q.Add("_pragma", "query_only(ON)")
		}
		return "file:" + abs + "?" + q.Encode()
	}
	db := &DB{
		Now:   func() time.Time { return time.Now().UTC() },
		NewID: uuid.NewString,
	}
	db.Store = sqlstore.New(txRunner{db}, sqlstore.SQLite, func() store.Observer { return db.Observer })
	db.publishCommits.name, db.runCommits.name = "publish", "runs"
	db.jobCommits.name, db.workflowCommits.name = "jobs", "workflows"
	if db.write, err = sql.Open("sqlite", dsn(false)); err != nil {
		return nil, err
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	if err := db.migrate(ctx); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	if db.read, err = sql.Open("sqlite", dsn(true)); err != nil {
		db.write.Close()
		return nil, err
	}
	n := max(4, runtime.NumCPU()*2)
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)
	if db.writeStmts, err = prepare(ctx, db.write, hotWrites()); err == nil {
		db.readStmts, err = prepare(ctx, db.read, hotReads())
	}
	if err == nil {
		db.dataVersion, err = openDataVersion(ctx, dsn(true), abs)
	}
	if err != nil {
		db.read.Close()
		db.write.Close()
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return db, nil
}

// prepare prepares queries on pool. It runs before any transaction
// exists: preparing on the writer pool inside a transaction would wait for
// the one connection that transaction holds.
func prepare(ctx context.Context, pool *sql.DB, queries []string) (map[string]*sql.Stmt, error) {
	stmts := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		s, err := pool.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		stmts[q] = s
	}
	return stmts, nil
}

// Close refuses further grouped writes, then closes the statements and both
// connection pools; database/sql lets the transactions under way finish.
// Calls after the first return the first one's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		var errs []error
		for _, stmts := range []map[string]*sql.Stmt{db.writeStmts, db.readStmts} {
			for _, s := range stmts {
				errs = append(errs, s.Close())
			}
		}
		// The data version's WAL-index descriptor is closed last (see
		// walIndex).
		errs = append(errs, db.read.Close(), db.write.Close(), db.dataVersion.close())
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// migrate applies, in name order, every embedded migration not yet recorded,
// each in its own transaction with its record.
func (db *DB) migrate(ctx context.Context) error { return db.migrateBefore(ctx, "") }

// migrateBefore is migrate for the migrations whose names sort before stop,
// or all of them when stop is empty: a test builds a database as an older
// release left it.
func (db *DB) migrateBefore(ctx context.Context, stop string) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	if err := db.checkKnown(ctx); err != nil {
		return err
	}
	return sqlstore.Migrate(migrationFS, stop, func(name string) error { return db.migrateFile(ctx, name) })
}

// checkKnown refuses a database that a newer release migrated
// (sqlstore.ErrNewerDatabase).
func (db *DB) checkKnown(ctx context.Context) error {
	rows, err := db.write.QueryContext(ctx, `SELECT name FROM migrations`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var recorded []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		recorded = append(recorded, name)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return sqlstore.CheckKnown(migrationFS, recorded)
}

func (db *DB) migrateFile(ctx context.Context, name string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	} else if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, formatTime(db.Now())); err != nil {
		return err
	}
	return tx.Commit()
}

// Tx is a transaction with the time fixed once for all it writes.
type Tx struct {
	*sql.Tx
	db    *DB
	now   time.Time
	stmts map[string]*sql.Stmt // the pool's prepared hot statements
	// name, writes and begun describe a write transaction for the
	// Observer (observe.go); writes is nil for a read.
	name   string
	writes []context.Context
	begun  time.Time
}

// exec runs a statement in the transaction, prepared when it is hot.
func (tx *Tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s := tx.stmts[q]; s != nil {
		return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, q, args...)
}

// query runs a query in the transaction, prepared when it is hot.
func (tx *Tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := tx.stmts[q]; s != nil {
		return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, q, args...)
}

// queryRow runs a one-row query in the transaction, prepared when it is
// hot.
func (tx *Tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if s := tx.stmts[q]; s != nil {
		return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, q, args...)
}

// beginWrite starts a transaction on the writer connection. Callers follow
// the pattern: begin, defer Rollback, helpers taking *Tx, Commit.
func (db *DB) beginWrite(ctx context.Context) (*Tx, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	return &Tx{Tx: tx, db: db, now: db.Now().UTC(), stmts: db.writeStmts,
		name: "write", writes: []context.Context{ctx}, begun: time.Now()}, nil
}

// beginRead starts a read-only transaction on the reader pool, so that a
// read of several statements sees one snapshot.
func (db *DB) beginRead(ctx context.Context) (*Tx, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, translate(err)
	}
	return &Tx{Tx: tx, db: db, now: db.Now().UTC(), stmts: db.readStmts}, nil
}

// translate turns driver errors into domain errors by SQLite result code,
// never by message text: a unique or primary-key violation is CONFLICT,
// a foreign-key violation (a reference to a row that does not exist) is
// NOT_FOUND, and sql.ErrNoRows is left for callers to name what was not
// found.
func translate(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &canvas.Error{Code: canvas.ECONFLICT, Message: "The resource already exists.", Err: err}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return &canvas.Error{Code: canvas.ENOTFOUND, Message: "A referenced resource does not exist.", Err: err}
		}
	}
	return err
}

// timeLayout is how timestamps are stored: UTC, fixed width, so that text
// order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }
