package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Compile-time check that DB offers its data version to caches.
var _ canvas.ChangeVersioner = (*DB)(nil)

// dataVersion reads SQLite's PRAGMA data_version on one dedicated
// connection, opened read-only (query_only) for the life of the DB and used
// for nothing else.
//
// It is sound as a change detector for the following reasons:
//
//   - SQLite documents that two reads of data_version on the same
//     connection differ when any other connection, in this process or in
//     another one, committed a change to the database in between. In WAL
//     mode the connection notices it when it starts a read transaction (the
//     pragma starts one) and finds the WAL index header changed, which every
//     commit changes.
//   - A connection's own commits do not change its data_version; this
//     connection never writes (query_only), and every write of the store
//     goes through the writer connection, so no commit can go unseen.
//   - The value is only meaningful on the connection it was read on: a
//     fresh connection starts counting anew. The connection is therefore
//     pinned (a sql.Conn held until Close) rather than taken from a pool
//     that could close it and open another; if it fails, DataVersion
//     returns the error and callers simply do not cache.
//
// The pragma runs as a driver statement prepared once on the connection,
// below database/sql, whose per-query bookkeeping costs as much as the
// pragma itself. The mutex serializes the reads, since a connection runs
// one statement at a time, and guards dest.
type dataVersion struct {
	mu   sync.Mutex
	pool *sql.DB
	conn *sql.Conn
	stmt driver.StmtQueryContext
	dest []driver.Value
}

// openDataVersion opens the dedicated connection on dsn, which must be
// read-only, and prepares the pragma on it.
func openDataVersion(ctx context.Context, dsn string) (*dataVersion, error) {
	pool, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	pool.SetConnMaxLifetime(0)
	dv := &dataVersion{pool: pool, dest: make([]driver.Value, 1)}
	if dv.conn, err = pool.Conn(ctx); err == nil {
		err = dv.conn.Raw(func(dc any) error {
			s, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, `PRAGMA data_version`)
			if err != nil {
				return err
			}
			if dv.stmt, _ = s.(driver.StmtQueryContext); dv.stmt == nil {
				return errors.Join(errors.New("the driver's statements take no context"), s.Close())
			}
			return nil
		})
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data version: %w", err), dv.close())
	}
	return dv, nil
}

// read returns the current data version. The pragma takes microseconds, so
// it ignores ctx's cancellation: watching a context costs the driver a
// goroutine per statement, more than the statement itself.
func (dv *dataVersion) read(ctx context.Context) (int64, error) {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	var v int64
	err := dv.conn.Raw(func(any) error {
		rows, err := dv.stmt.QueryContext(context.WithoutCancel(ctx), nil)
		if err != nil {
			return err
		}
		err = rows.Next(dv.dest)
		if err == nil {
			var ok bool
			if v, ok = dv.dest[0].(int64); !ok {
				err = fmt.Errorf("unexpected value %T", dv.dest[0])
			}
		}
		return errors.Join(err, rows.Close())
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: data version: %w", err)
	}
	return v, nil
}

func (dv *dataVersion) close() error {
	var errs []error
	if dv.stmt != nil {
		errs = append(errs, dv.conn.Raw(func(any) error { return dv.stmt.(driver.Stmt).Close() }))
	}
	if dv.conn != nil {
		errs = append(errs, dv.conn.Close())
	}
	return errors.Join(append(errs, dv.pool.Close())...)
}

// DataVersion returns a number that changes whenever a change is committed
// to the database file, by this DB or by any other connection or process
// (canvasd keys revoke on the same file, for example), and stays the same
// otherwise. Values are comparable only with each other for one DB between
// Open and Close. A cache may serve a value it built after reading version
// n for as long as DataVersion still returns n: no commit has happened
// since, so the value is what the database would answer now.
func (db *DB) DataVersion(ctx context.Context) (int64, error) {
	return db.dataVersion.read(ctx)
}
