package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// DatabaseFile is the name of the SQLite database in a data directory;
// FilesDir holds the uploaded files beside it.
const (
	DatabaseFile = "canvas.db"
	FilesDir     = "files"
)

// OpenSQLite opens (creating when missing) the data directory dir, the
// embedded default: the SQLite database dir/canvas.db and, unless
// opts.Blobs is set (an S3 bucket, say), the uploaded files under
// dir/files, and builds an Engine over them with opts (whose Store, when
// set, is replaced). Close closes the database; opts.Blobs stays its
// opener's to close.
func OpenSQLite(ctx context.Context, dir string, opts Options) (*Engine, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, DatabaseFile))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(dir, DatabaseFile), err)
	}
	if opts.Blobs == nil {
		blobs, err := vault.NewFSBlobs(filepath.Join(dir, FilesDir))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("file directory: %w", err), db.Close())
		}
		opts.Blobs = blobs
	}
	opts.Store = db
	e, err := Open(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	e.closeFn = db.Close
	return e, nil
}
