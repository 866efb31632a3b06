package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// DatabaseFile is the name of the SQLite database in a data directory;
// FilesDir holds the uploaded files beside it, and LockFile is the lock of
// the process that serves the directory (OpenSQLite).
const (
	DatabaseFile = "canvas.db"
	FilesDir     = "files"
	LockFile     = "canvas.lock"
	// SecretsKeyFile holds the key-encryption keys of the credentials
	// stored in the directory's database, unless Options.Secrets is set.
	SecretsKeyFile = "secrets.key"
)

// ErrDataDirHeld is the error of OpenSQLite on a data directory that
// another server holds.
var ErrDataDirHeld = errors.New("another server holds the data directory")

// OpenSQLite opens (creating when missing) the data directory dir, the
// embedded default: the SQLite database dir/canvas.db, unless opts.Blobs
// is set (an S3 bucket, say) the uploaded files under dir/files, and
// unless opts.Secrets is set the key file dir/secrets.key that seals
// credentials (created, mode 0600, on first start, which is logged), and
// builds an Engine over them with opts (whose Store, when set, is
// replaced). Close closes the database; opts.Blobs stays its
// opener's to close.
//
// The Engine holds the directory until Close (an flock on dir/canvas.lock,
// which the system drops when the process dies, even killed): a directory
// another Engine holds, in this process or another, is ErrDataDirHeld. So
// no earlier process that served dir still runs, and OpenSQLite releases
// the Idempotency-Keys they held at once (idempotency.Service.ReleaseOthers)
// rather than leaving them to their leases: the retry of a request they
// carried out answers from its work, any other retry runs anew. Tools that
// work on the records beside a server use OpenSQLiteBeside.
func OpenSQLite(ctx context.Context, dir string, opts Options) (*Engine, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	unlock, locked, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	e, err := openSQLite(ctx, dir, opts)
	if err != nil {
		return nil, errors.Join(err, unlock())
	}
	closeDB := e.closeFn
	e.closeFn = func() error { return errors.Join(closeDB(), unlock()) }
	if locked {
		if err := e.Idempotency.ReleaseOthers(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("release the idempotency keys of earlier processes: %w", err), e.Close())
		}
	}
	return e, nil
}

// OpenSQLiteBeside opens the data directory dir as OpenSQLite does, without
// holding it, for a tool that works on its records while a server may
// serve it (canvasd export and import): it takes no lock and releases no
// Idempotency-Keys. It must not serve requests.
func OpenSQLiteBeside(ctx context.Context, dir string, opts Options) (*Engine, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return openSQLite(ctx, dir, opts)
}

// openSQLite opens the database and files of dir and builds the Engine.
func openSQLite(ctx context.Context, dir string, opts Options) (*Engine, error) {
	db, err := sqlite.Open(ctx, filepath.Join(dir, DatabaseFile))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(dir, DatabaseFile), err)
	}
	if opts.Secrets == nil {
		path := filepath.Join(dir, SecretsKeyFile)
		ring, created, err := credential.LoadOrCreateKeyFile(path)
		if err != nil {
			return nil, errors.Join(err, db.Close())
		}
		if created && opts.Logger != nil {
			opts.Logger.InfoContext(ctx, "created the secrets key file that seals credentials; back it up with the database",
				slog.String("path", path), slog.String("keyId", ring.Current()))
		}
		opts.Secrets = ring
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
