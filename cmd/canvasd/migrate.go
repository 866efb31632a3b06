package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/store/postgres"
	"github.com/promptcanvas/promptcanvas/store/storecopy"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/vault/bucketblobs"
)

const migrateUsage = `Usage:
  canvasd migrate-store --from sqlite:DIR --to postgres://USER:PASSWORD@HOST/DB [--blobs URL]
`

// migrateStore copies a SQLite data directory into an empty Postgres
// database (store/storecopy): every table, keeping every id, and the bytes
// of every uploaded file, into the database's own blob storage or, with
// --blobs, an S3 bucket. It refuses a target that holds any record and
// checks the counts and every file's checksum before it commits.
func migrateStore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var from, to, blobs string
	fs := newFlagSet("canvasd migrate-store", stderr)
	fs.StringVar(&from, "from", "", "the SQLite data `directory` to copy, as sqlite:DIR")
	fs.StringVar(&to, "to", getenv("CANVAS_DATABASE"),
		"the empty Postgres database to copy into, a postgres:// `URL` (env CANVAS_DATABASE)")
	fs.StringVar(&blobs, "blobs", getenv("CANVAS_BLOBS"),
		"where the target keeps uploaded files: empty for the Postgres database, or an s3:// `URL` (env CANVAS_BLOBS)")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	src, err := parseDatabase(from, "")
	if err != nil || src.Kind != kindSQLite || src.Dir == "" {
		fmt.Fprint(stderr, "canvasd migrate-store: --from must be sqlite:DIR, the data directory to copy\n\n"+migrateUsage)
		return errUsage
	}
	dst, err := parseDatabase(to, "")
	if err != nil || dst.Kind != kindPostgres {
		fmt.Fprint(stderr, "canvasd migrate-store: --to must be a postgres:// URL\n\n"+migrateUsage)
		return errUsage
	}
	if err := sqliteExists(src.Dir); err != nil {
		return err
	}
	sourceBlobs, err := vault.NewFSBlobs(filepath.Join(src.Dir, engine.FilesDir))
	if err != nil {
		return fmt.Errorf("file directory: %w", err)
	}
	pg, err := postgres.Open(ctx, dst.DSN)
	if err != nil {
		return fmt.Errorf("open %s: %w", dst, err)
	}
	defer pg.Close()
	var targetBlobs vault.Blobs = pg.Blobs()
	if blobs != "" {
		b, err := bucketblobs.Open(ctx, blobs)
		if err != nil {
			return err
		}
		defer b.Close()
		targetBlobs = b
	}
	report, err := storecopy.SQLiteToPostgres(ctx, storecopy.Options{
		SQLite:      filepath.Join(src.Dir, engine.DatabaseFile),
		Postgres:    pg,
		SourceBlobs: sourceBlobs,
		TargetBlobs: targetBlobs,
		Progress:    stdout,
	})
	if err != nil {
		return fmt.Errorf("migrate %s to %s: %w", src, dst, err)
	}
	var rows int64
	for _, t := range report.Tables {
		rows += t.Rows
	}
	fmt.Fprintf(stdout, "copied %d rows of %d tables and %d files (%d bytes) from %s to %s; counts and checksums verified\n",
		rows, len(report.Tables), report.Files, report.Bytes, src, dst)
	return nil
}
