package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/store/postgres"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault/bucketblobs"
)

// databaseConfig selects where canvasd keeps its records and the bytes of
// uploaded files.
type databaseConfig struct {
	// Database is the store (--database, CANVAS_DATABASE): empty or
	// "sqlite:" for SQLite in the data directory, "sqlite:DIR" for SQLite
	// in DIR, or a postgres:// (postgresql://) URL.
	Database string
	// Blobs is where uploaded files go (--blobs, CANVAS_BLOBS): empty for
	// the store's default (the files directory beside SQLite, the database
	// itself with Postgres), or an s3:// URL.
	Blobs string
}

// Store kinds.
const (
	kindSQLite   = "sqlite"
	kindPostgres = "postgres"
)

// database is a parsed --database.
type database struct {
	// Kind is kindSQLite or kindPostgres.
	Kind string
	// Dir is the data directory of SQLite.
	Dir string
	// DSN is the connection string of Postgres.
	DSN string
}

// String names the database for logs and messages, without a password.
func (d database) String() string {
	if d.Kind == kindSQLite {
		return "sqlite:" + d.Dir
	}
	if u, err := url.Parse(d.DSN); err == nil {
		return u.Redacted()
	}
	return "postgres"
}

// parseDatabase reads a --database value; dataDir is the data directory
// that "" and "sqlite:" name.
func parseDatabase(raw, dataDir string) (database, error) {
	switch {
	case raw == "":
		return database{Kind: kindSQLite, Dir: dataDir}, nil
	case strings.HasPrefix(raw, "sqlite:"):
		dir := strings.TrimPrefix(raw, "sqlite:")
		if dir == "" {
			dir = dataDir
		}
		return database{Kind: kindSQLite, Dir: dir}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" && u.Query().Get("host") == "" {
			return database{}, fmt.Errorf("database URL is not a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL")
		}
		return database{Kind: kindPostgres, DSN: raw}, nil
	}
	// The value may hold a password: it is not repeated.
	return database{}, fmt.Errorf("database %q: want sqlite:[DIR] or postgres://…", scheme(raw))
}

// scheme returns what comes before the first colon of raw, or raw when it
// is short and has none, to name a value without its secrets.
func scheme(raw string) string {
	if i := strings.Index(raw, ":"); i >= 0 {
		return raw[:i] + ":…"
	}
	if len(raw) > 16 {
		return raw[:16] + "…"
	}
	return raw
}

// databaseFlag registers --database, which every command that opens the
// store takes.
func (c *databaseConfig) databaseFlag(fs *flag.FlagSet, env func(string) string) {
	fs.StringVar(&c.Database, "database", env("CANVAS_DATABASE"),
		"store `URL`: sqlite:[DIR] (default, the data directory) or postgres://USER:PASSWORD@HOST/DB (env CANVAS_DATABASE)")
}

// blobsFlag registers --blobs.
func (c *databaseConfig) blobsFlag(fs *flag.FlagSet, env func(string) string) {
	fs.StringVar(&c.Blobs, "blobs", env("CANVAS_BLOBS"),
		"where uploaded files go: empty for the store's default (the data directory with SQLite, the database "+
			"with Postgres) or s3://BUCKET?region=R[&endpoint=URL&use_path_style=true&prefix=P] (env CANVAS_BLOBS)")
}

// database returns the parsed --database.
func (c *config) database() (database, error) { return parseDatabase(c.Database, c.Data) }

// openEngine opens the store and blob storage the configuration selects
// and builds the engine over them with opts, whose key ring is the
// configured key file unless opts has one (without either, SQLite's
// engine uses the data directory's). Without create, a SQLite data
// directory must already hold a database. The server (serving) holds a
// SQLite data directory while it runs (engine.OpenSQLite), so that a
// second server on it fails; the other commands open it beside the server
// (engine.OpenSQLiteBeside). The returned close closes the engine, then
// the blob storage.
func (c *config) openEngine(ctx context.Context, opts engine.Options, create, serving bool) (*engine.Engine, func() error, error) {
	db, err := c.database()
	if err != nil {
		return nil, nil, err
	}
	if db.Kind == kindSQLite && !create {
		if err := sqliteExists(db.Dir); err != nil {
			return nil, nil, err
		}
	}
	if opts.Secrets == nil && c.SecretsKeyFile != "" {
		ring, err := credential.LoadKeyFile(c.SecretsKeyFile)
		if err != nil {
			return nil, nil, err
		}
		opts.Secrets = ring
	}
	closeBlobs := func() error { return nil }
	if c.Blobs != "" {
		b, err := bucketblobs.Open(ctx, c.Blobs)
		if err != nil {
			return nil, nil, err
		}
		opts.Blobs, closeBlobs = b, b.Close
	}
	var eng *engine.Engine
	switch kind := db.Kind; {
	case kind == kindSQLite && serving:
		eng, err = engine.OpenSQLite(ctx, db.Dir, opts)
	case kind == kindSQLite:
		eng, err = engine.OpenSQLiteBeside(ctx, db.Dir, opts)
	case kind == kindPostgres:
		eng, err = pgengine.Open(ctx, db.DSN, opts)
	}
	if err != nil {
		return nil, nil, errors.Join(err, closeBlobs())
	}
	return eng, func() error { return errors.Join(eng.Close(), closeBlobs()) }, nil
}

// openStore opens the store the configuration selects, for the commands
// that work on records alone (canvasd keys). Only create may make a new
// SQLite database; the others need an existing one.
func (c *config) openStore(ctx context.Context, create bool) (store.Store, error) {
	db, err := c.database()
	if err != nil {
		return nil, err
	}
	if db.Kind == kindPostgres {
		s, err := postgres.Open(ctx, db.DSN)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", db, err)
		}
		return s, nil
	}
	path := filepath.Join(db.Dir, engine.DatabaseFile)
	if create {
		if _, err := dataDir(db.Dir); err != nil {
			return nil, err
		}
	} else if err := sqliteExists(db.Dir); err != nil {
		return nil, err
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// sqliteExists reports an error unless dir holds a SQLite database.
func sqliteExists(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, engine.DatabaseFile)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no database in %s", dir)
	} else if err != nil {
		return err
	}
	return nil
}
