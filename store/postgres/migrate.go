package postgres

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the key of the session advisory lock held while
// migrations run, so that processes starting at once on one database
// apply each migration once: the others wait, then find it recorded.
const migrationLock int64 = 0x63616e7661736d67 // "canvasmg"

// migrate applies, in name order, every embedded migration not yet
// recorded in schema_migrations, each in its own transaction with its
// record, under the migration lock. A database that records a migration
// this binary does not embed is refused (sqlstore.ErrNewerDatabase).
func (db *DB) migrate(ctx context.Context) error { return db.migrateBefore(ctx, "") }

// migrateBefore is migrate for the migrations whose names sort before
// stop, or all of them when stop is empty.
func (db *DB) migrateBefore(ctx context.Context, stop string) (err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return err
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock); uerr != nil {
			// A session lock that could not be released goes with its
			// connection.
			conn.Conn().Close(context.WithoutCancel(ctx))
			err = errors.Join(err, uerr)
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name text PRIMARY KEY, applied_at timestamptz NOT NULL)`); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return err
	}
	recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if err := sqlstore.CheckKnown(migrationFS, recorded); err != nil {
		return err
	}
	return sqlstore.Migrate(migrationFS, stop, func(name string) error {
		return db.migrateFile(ctx, conn.Conn(), name)
	})
}

// migrateFile applies one migration on conn unless it is recorded.
func (db *DB) migrateFile(ctx context.Context, conn *pgx.Conn, name string) error {
	key := strings.TrimPrefix(name, "migrations/")
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var done bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, key).Scan(&done); err != nil {
		return err
	} else if done {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	// The simple protocol runs a file of several statements.
	if _, err := tx.Exec(ctx, string(body), pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)`,
		key, instant(db.Now())); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
