package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
// data_version moves on every commit, including the ones no cache cares
// about (run records, job leases, idempotency keys). What callers get is
// therefore the revision counter of migration 008, which triggers increment
// on every change to a table caches derive values from. It is read again
// only when data_version has moved since the last read: an unchanged
// data_version proves that nothing was committed, so the counter cannot have
// moved either. The counter is read after the pragma, so it is never older
// than the moment the pragma speaks for.
//
// Both statements run as driver statements prepared once on the
// connection, below database/sql, whose per-query bookkeeping costs as much
// as the pragma itself. The mutex serializes the readings, since a
// connection runs one statement at a time, and guards dest and the last
// values.
//
// Concurrent callers share readings: a caller that finds, once it holds the
// mutex, that a reading begun after its own call began has completed takes
// that reading's result rather than making its own. Such a reading sees
// every commit that completed before the caller's call began, which is all
// a caller may count on from a reading of its own, so the answer is as
// fresh; under load, the callers that queued behind one reading share the
// next one.
//
// Before any of that, a reading looks at the WAL-index header
// (walindex.go), which every commit in any process changes: when it is the
// header read before the last reading, nothing was committed since, and the
// last reading's revision is the answer, without a statement, a lock or a
// system call. A server that only reads (prompts served to clients) then
// pays a few memory loads per cache check.
type dataVersion struct {
	// wal maps the WAL-index (nil: every reading goes through SQLite);
	// walMu guards the mapping's life: readers of the header hold it
	// shared, close holds it to unmap. snap is the last reading with the
	// header read before it (nil: none to reuse).
	wal   *walIndex
	walMu sync.RWMutex
	snap  atomic.Pointer[versionSnap]

	// begun counts the readings begun, done is the number of the last
	// reading that completed without error (0: none).
	begun atomic.Int64
	done  int64

	mu       sync.Mutex
	pool     *sql.DB
	conn     *sql.Conn
	pragma   driver.StmtQueryContext
	revision driver.StmtQueryContext
	dest     []driver.Value

	known    bool  // lastData and lastRev hold a reading
	lastData int64 // data_version at the last reading
	lastRev  int64 // the revision counter at the last reading
}

// versionSnap is a reading of the revision and the WAL-index header read
// just before it.
type versionSnap struct {
	hdr walHeader
	rev int64
}

// openDataVersion opens the dedicated connection on dsn, which must be
// read-only and name the database at path, prepares the pragma on it, and
// maps the database's WAL-index.
func openDataVersion(ctx context.Context, dsn, path string) (*dataVersion, error) {
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
			var err error
			if dv.pragma, err = prepareQuery(ctx, dc, `PRAGMA data_version`); err != nil {
				return err
			}
			dv.revision, err = prepareQuery(ctx, dc, `SELECT value FROM revision WHERE id = 1`)
			return err
		})
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data version: %w", err), dv.close())
	}
	// The connection above keeps the database open in WAL mode, so the
	// WAL-index file exists and stays for as long as the mapping.
	dv.wal = openWALIndex(path)
	return dv, nil
}

// prepareQuery prepares query on the driver connection dc.
func prepareQuery(ctx context.Context, dc any, query string) (driver.StmtQueryContext, error) {
	s, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	q, ok := s.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.Join(errors.New("the driver's statements take no context"), s.Close())
	}
	return q, nil
}

// read returns the current revision. The statements take microseconds, so
// it ignores ctx's cancellation: watching a context costs the driver a
// goroutine per statement, more than the statement itself.
func (dv *dataVersion) read(ctx context.Context) (int64, error) {
	if rev, ok := dv.unchanged(); ok {
		return rev, nil
	}
	arrived := dv.begun.Load()
	dv.mu.Lock()
	defer dv.mu.Unlock()
	if dv.done > arrived {
		return dv.lastRev, nil // a reading begun after this call began
	}
	n := dv.begun.Add(1)
	// The header is read before the statements, so the reading is at least
	// as new as the header it is kept with.
	hdr, mapped := dv.header()
	ctx = context.WithoutCancel(ctx)
	var rev int64
	err := dv.conn.Raw(func(any) error {
		if mapped {
			// The header changed since the last reading (or there is
			// none): something was committed, and the pragma would only
			// say so again.
			var err error
			rev, err = dv.queryInt(ctx, dv.revision)
			dv.lastRev = rev
			return err
		}
		data, err := dv.queryInt(ctx, dv.pragma)
		if err != nil || (dv.known && data == dv.lastData) {
			rev = dv.lastRev
			return err
		}
		if rev, err = dv.queryInt(ctx, dv.revision); err != nil {
			return err
		}
		dv.known, dv.lastData, dv.lastRev = true, data, rev
		return nil
	})
	if err != nil {
		dv.known = false
		dv.snap.Store(nil)
		return 0, fmt.Errorf("sqlite: data version: %w", err)
	}
	dv.done = n
	if mapped {
		dv.snap.Store(&versionSnap{hdr: hdr, rev: rev})
	}
	return rev, nil
}

// unchanged returns the last reading's revision when the WAL-index header
// is still the one read before it: nothing was committed since.
func (dv *dataVersion) unchanged() (int64, bool) {
	s := dv.snap.Load()
	if s == nil {
		return 0, false
	}
	hdr, ok := dv.header()
	return s.rev, ok && hdr == s.hdr
}

// header reads the WAL-index header; ok is false when it is not mapped.
func (dv *dataVersion) header() (h walHeader, ok bool) {
	dv.walMu.RLock()
	defer dv.walMu.RUnlock()
	if dv.wal == nil {
		return h, false
	}
	return dv.wal.header(), true
}

// queryInt runs a prepared one-row, one-column query.
func (dv *dataVersion) queryInt(ctx context.Context, stmt driver.StmtQueryContext) (int64, error) {
	rows, err := stmt.QueryContext(ctx, nil)
	if err != nil {
		return 0, err
	}
	var v int64
	err = rows.Next(dv.dest)
	if err == nil {
		var ok bool
		if v, ok = dv.dest[0].(int64); !ok {
			err = fmt.Errorf("unexpected value %T", dv.dest[0])
		}
	}
	return v, errors.Join(err, rows.Close())
}

func (dv *dataVersion) close() error {
	var errs []error
	for _, stmt := range []driver.StmtQueryContext{dv.pragma, dv.revision} {
		if stmt != nil {
			errs = append(errs, dv.conn.Raw(func(any) error { return stmt.(driver.Stmt).Close() }))
		}
	}
	if dv.conn != nil {
		errs = append(errs, dv.conn.Close())
	}
	dv.snap.Store(nil)
	dv.walMu.Lock()
	errs = append(errs, dv.wal.close())
	dv.wal = nil
	dv.walMu.Unlock()
	return errors.Join(append(errs, dv.pool.Close())...)
}

// DataVersion returns a number that changes whenever a change to a table
// that caches derive values from (workspaces, projects, API keys, canvases,
// favorites, versions, messages, environments, publications) is committed,
// by this DB or by any other connection or process (canvasd keys revoke on
// the same file, for example), and stays the same otherwise; commits to
// other tables, such as run records and job leases, leave it alone. A cache
// may serve a value it built after reading version n for as long as
// DataVersion still returns n: none of that data changed since, so the value
// is what the database would answer now.
func (db *DB) DataVersion(ctx context.Context) (int64, error) {
	return db.dataVersion.read(ctx)
}
