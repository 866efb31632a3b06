package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/promptcanvas/promptcanvas/store/postgres"
)

// OpenPostgres opens the PostgreSQL database dsn names (a postgres:// URL
// or key=value connection string), applying its pending migrations, and
// builds an Engine over it with opts: the Store is the database, and so
// are the blobs (the bytes of uploaded files) unless opts.Blobs is set, so
// that every replica on the database reads every upload. Close closes the
// database. Several processes may run an Engine on one database: they
// share its jobs, publications and caches' change signal.
func OpenPostgres(ctx context.Context, dsn string, opts Options) (*Engine, error) {
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	opts.Store = db
	if opts.Blobs == nil {
		opts.Blobs = db.Blobs()
	}
	e, err := Open(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	e.closeFn = db.Close
	return e, nil
}
