package pgengine

import (
	"context"
	"errors"
	"fmt"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/store/postgres"
)

// Open opens the PostgreSQL database dsn names (a postgres:// URL or
// key=value connection string), applying its pending migrations, and
// builds an Engine over it with opts (whose Store and Close, when set, are
// replaced): the Store is the database, and so are the blobs (the bytes of
// uploaded files) unless opts.Blobs is set, so that every replica on the
// database reads every upload. The Engine's Close closes the database;
// opts.Blobs stays its opener's to close. Several processes may run an Engine on one
// database: they share its jobs, publications and caches' change signal.
func Open(ctx context.Context, dsn string, opts engine.Options) (*engine.Engine, error) {
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	opts.Store = db
	if opts.Blobs == nil {
		opts.Blobs = db.Blobs()
	}
	opts.Close = db.Close
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return e, nil
}
