package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	_ "modernc.org/sqlite" // the driver of the snapshot's connections

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/vault/bucketblobs"
)

// ManifestFile is the manifest of a backup directory; backupFormat is the
// version of its layout.
const (
	ManifestFile = "manifest.json"
	backupFormat = 1
)

// secretsWarning is the manifest's and the command's word on the key file
// a backup holds.
const secretsWarning = "This backup holds the secrets key file, which unseals the credentials' API keys " +
	"stored in its database: keep it where only the operator can read it, apart from copies of the database " +
	"alone if you keep those."

// manifest describes a backup directory: what it holds, with the SHA-256
// and size of every file, so that restore can prove it whole.
type manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"createdAt"`
	// Canvasd is the version of the canvasd that took the backup.
	Canvasd string `json:"canvasd"`
	// Migration is the newest migration the snapshot records.
	Migration string `json:"migration"`
	// Database is the snapshot, SecretsKey the key file (absent when the
	// data had none), Files the bytes of uploaded files the snapshot
	// refers to.
	Database   manifestFile   `json:"database"`
	SecretsKey *manifestFile  `json:"secretsKey,omitempty"`
	Files      []manifestFile `json:"files"`
	// Counts are the rows of each table of the snapshot.
	Counts map[string]int64 `json:"counts"`
	// DeletedSinceSnapshot lists the blob keys of files the snapshot holds
	// whose bytes were deleted (their file deleted or expired) between the
	// snapshot and the copy; those files answer 404 once restored.
	DeletedSinceSnapshot []string `json:"deletedSinceSnapshot,omitempty"`
	Warning              string   `json:"warning,omitempty"`
}

// manifestFile is one file of a backup, by its path in the directory.
type manifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// backup writes a consistent copy of a SQLite data directory, which a
// server may be serving, to an empty or new directory: a snapshot of the
// database taken in one read transaction (VACUUM INTO, which in WAL mode
// never blocks writers), the uploaded files the snapshot refers to, the
// secrets key file, and a manifest.
func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	var to string
	fs := newFlagSet("canvasd backup", stderr)
	cfg.dataFlag(fs, getenv)
	cfg.blobsFlag(fs, getenv)
	cfg.secretsFlag(fs, getenv)
	fs.StringVar(&to, "to", "", "`directory` to write the backup to: new or empty")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	if to == "" {
		fmt.Fprint(stderr, "canvasd backup: --to is required\n\n"+commandUsage("backup"))
		return errUsage
	}
	db, err := cfg.database()
	if err != nil {
		return err
	}
	if db.Kind != kindSQLite {
		return errors.New("canvasd backup copies a SQLite data directory; back up Postgres with pg_dump " +
			"or a base backup, and the blob store and key file apart (see the README's Deploying section)")
	}
	if err := sqliteExists(db.Dir); err != nil {
		return err
	}
	if err := emptyDir(to); err != nil {
		return err
	}
	m, err := writeBackup(ctx, &cfg, db.Dir, to)
	if err != nil {
		return errors.Join(err, clearDir(to))
	}
	fmt.Fprintf(stdout, "backed up %s to %s: database (migration %s), %d files", db.Dir, to, m.Migration, len(m.Files))
	if m.SecretsKey != nil {
		fmt.Fprint(stdout, ", secrets key file")
	}
	fmt.Fprintln(stdout)
	if m.SecretsKey != nil {
		fmt.Fprintln(stderr, "canvasd backup: "+secretsWarning)
	}
	if n := len(m.DeletedSinceSnapshot); n > 0 {
		fmt.Fprintf(stderr, "canvasd backup: %d files were deleted after the snapshot; the manifest lists them\n", n)
	}
	return nil
}

// writeBackup writes the backup of the data directory dir to to, which
// exists and is empty.
func writeBackup(ctx context.Context, cfg *config, dir, to string) (*manifest, error) {
	m := &manifest{Format: backupFormat, CreatedAt: time.Now().UTC(), Canvasd: binaryVersion(), Files: []manifestFile{}}
	snapshot := filepath.Join(to, engine.DatabaseFile)
	if err := snapshotSQLite(ctx, filepath.Join(dir, engine.DatabaseFile), snapshot); err != nil {
		return nil, err
	}
	keys, err := readSnapshot(ctx, snapshot, m)
	if err != nil {
		return nil, err
	}
	if m.Database, err = sumFile(to, engine.DatabaseFile); err != nil {
		return nil, err
	}
	blobs, closeBlobs, err := openBackupBlobs(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer closeBlobs()
	if len(keys) > 0 {
		if err := os.Mkdir(filepath.Join(to, engine.FilesDir), 0o700); err != nil {
			return nil, err
		}
	}
	for _, key := range keys {
		f, err := copyBlob(ctx, blobs, key, to)
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			m.DeletedSinceSnapshot = append(m.DeletedSinceSnapshot, key)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", key, err)
		}
		m.Files = append(m.Files, f)
	}
	keyFile := cfg.keyFile(database{Kind: kindSQLite, Dir: dir})
	if raw, err := os.ReadFile(keyFile); err == nil {
		if err := os.WriteFile(filepath.Join(to, engine.SecretsKeyFile), raw, 0o600); err != nil {
			return nil, err
		}
		f, err := sumFile(to, engine.SecretsKeyFile)
		if err != nil {
			return nil, err
		}
		m.SecretsKey, m.Warning = &f, secretsWarning
	} else if !errors.Is(err, os.ErrNotExist) || cfg.SecretsKeyFile != "" {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	// The manifest comes last: a directory without one is no backup.
	if err := writeSynced(filepath.Join(to, ManifestFile), append(raw, '\n'), 0o600); err != nil {
		return nil, err
	}
	return m, nil
}

// snapshotSQLite writes a consistent copy of the database at src to dst
// with VACUUM INTO: one read transaction, which in WAL mode neither waits
// for writers nor makes them wait, and a compact file with no WAL beside
// it.
func snapshotSQLite(ctx context.Context, src, dst string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+abs+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("snapshot %s: %w", src, err)
	}
	return nil
}

// readSnapshot fills m's migration and counts from the snapshot at path
// and returns the blob keys of the uploaded files it refers to.
func readSnapshot(ctx context.Context, path string, m *manifest) ([]string, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var ok string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil {
		return nil, err
	} else if ok != "ok" {
		return nil, fmt.Errorf("snapshot %s fails its integrity check: %s", path, ok)
	}
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(name), '') FROM migrations`).Scan(&m.Migration); err != nil {
		return nil, err
	}
	m.Migration = filepath.Base(m.Migration)
	if m.Counts, err = countTables(ctx, db); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT blob_key FROM files WHERE blob_key <> '' ORDER BY blob_key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// countTables counts the rows of every table of db.
func countTables(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	counts := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		// The names come from sqlite_schema, quoted as identifiers.
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t+`"`).Scan(&n); err != nil {
			return nil, err
		}
		counts[t] = n
	}
	return counts, nil
}

// openBackupBlobs opens the blob storage the server of dir writes to: the
// configured bucket, or dir/files.
func openBackupBlobs(ctx context.Context, cfg *config, dir string) (vault.Blobs, func() error, error) {
	if cfg.Blobs != "" {
		b, err := bucketblobs.Open(ctx, cfg.Blobs)
		if err != nil {
			return nil, nil, err
		}
		return b, b.Close, nil
	}
	b, err := vault.NewFSBlobs(filepath.Join(dir, engine.FilesDir))
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// copyBlob copies the bytes of key to to/files/key, synced, and returns
// their manifest entry; a key whose bytes are gone is NOT_FOUND.
func copyBlob(ctx context.Context, blobs vault.Blobs, key, to string) (manifestFile, error) {
	rel := filepath.Join(engine.FilesDir, key)
	if key != filepath.Base(key) {
		return manifestFile{}, fmt.Errorf("blob key %q is not a file name", key)
	}
	r, err := blobs.Open(ctx, key)
	if err != nil {
		return manifestFile{}, err
	}
	defer r.Close()
	dst, err := os.OpenFile(filepath.Join(to, rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return manifestFile{}, err
	}
	h := newSum()
	n, err := io.Copy(io.MultiWriter(dst, h), r)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return manifestFile{}, err
	}
	return manifestFile{Path: filepath.ToSlash(rel), Size: n, SHA256: h.hex()}, nil
}

// sum is a SHA-256 being computed.
type sum struct{ hash.Hash }

func newSum() sum { return sum{sha256.New()} }

// hex is the sum so far, in hex.
func (s sum) hex() string { return hex.EncodeToString(s.Sum(nil)) }

// sumFile returns the manifest entry of dir/rel.
func sumFile(dir, rel string) (manifestFile, error) {
	f, err := os.Open(filepath.Join(dir, rel))
	if err != nil {
		return manifestFile{}, err
	}
	defer f.Close()
	h := newSum()
	n, err := io.Copy(h, f)
	if err != nil {
		return manifestFile{}, err
	}
	return manifestFile{Path: filepath.ToSlash(rel), Size: n, SHA256: h.hex()}, nil
}

// writeSynced writes a file and syncs it to the disk.
func writeSynced(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// emptyDir creates dir (mode 0700) when it is missing; an existing dir
// must be an empty directory.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return fmt.Errorf("%s: %s", dir, pathReason(err, dir))
	case len(entries) > 0:
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		return fmt.Errorf("%s is not empty (it holds %v%s): give a new or empty directory",
			dir, names, map[bool]string{true: ", …", false: ""}[len(entries) > 3])
	}
	return nil
}

// binaryVersion is the main module's version of this binary, and its
// commit when the build recorded one.
func binaryVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if i := slices.IndexFunc(bi.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs.revision" }); i >= 0 {
		v += " " + bi.Settings[i].Value
	}
	return v
}
