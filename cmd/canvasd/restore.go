package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/promptcanvas/promptcanvas/engine"
)

// restore verifies a backup written by canvasd backup against its manifest
// and copies it into a new or empty data directory, which a server then
// serves (migrating it first when the backup is older than the binary).
// A directory that holds anything is refused, and a restore that fails
// removes what it wrote.
func restore(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	var from, data string
	fs := newFlagSet("canvasd restore", stderr)
	fs.StringVar(&from, "from", "", "backup `directory` written by canvasd backup")
	fs.StringVar(&data, "data", "", "data `directory` to restore into: new or empty")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	if from == "" || data == "" {
		fmt.Fprint(stderr, "canvasd restore: --from and --data are required\n\n"+commandUsage("restore"))
		return errUsage
	}
	m, err := verifyBackup(from)
	if err != nil {
		return err
	}
	if err := emptyDir(data); err != nil {
		return err
	}
	if err := restoreInto(ctx, from, data, m); err != nil {
		return errors.Join(err, clearDir(data))
	}
	fmt.Fprintf(stdout, "restored %s into %s: database (migration %s), %d files", from, data, m.Migration, len(m.Files))
	if m.SecretsKey != nil {
		fmt.Fprint(stdout, ", secrets key file")
	}
	fmt.Fprintln(stdout)
	if m.SecretsKey == nil && m.Counts["credentials"] > 0 {
		fmt.Fprintln(stderr, "canvasd restore: the backup holds no secrets key file: serve it with the "+
			"--secrets-key-file its credentials were sealed under")
	}
	return nil
}

// verifyBackup reads the manifest of the backup directory dir and checks
// that every file it lists is there with its size and SHA-256.
func verifyBackup(dir string) (*manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no %s: it is not a backup written by canvasd backup, or an unfinished one", dir, ManifestFile)
	} else if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Format != backupFormat {
		return nil, fmt.Errorf("%s: backup format %d; this canvasd reads format %d", dir, m.Format, backupFormat)
	}
	if m.Database.Path != engine.DatabaseFile {
		return nil, fmt.Errorf("%s: the manifest names database %q, not %s", dir, m.Database.Path, engine.DatabaseFile)
	}
	if m.SecretsKey != nil && m.SecretsKey.Path != engine.SecretsKeyFile {
		return nil, fmt.Errorf("%s: the manifest names key file %q, not %s", dir, m.SecretsKey.Path, engine.SecretsKeyFile)
	}
	for _, f := range m.Files {
		if dirName, name := path.Split(f.Path); dirName != engine.FilesDir+"/" || name == "" || name[0] == '.' {
			return nil, fmt.Errorf("%s: the manifest names file %q outside %s/", dir, f.Path, engine.FilesDir)
		}
	}
	for _, f := range m.all() {
		got, err := sumFile(dir, filepath.FromSlash(f.Path))
		if err != nil {
			return nil, fmt.Errorf("backup %s: %w", dir, err)
		}
		if got.Size != f.Size || got.SHA256 != f.SHA256 {
			return nil, fmt.Errorf("backup %s: %s does not match the manifest (size %d, want %d; sha256 %s, want %s)",
				dir, f.Path, got.Size, f.Size, got.SHA256, f.SHA256)
		}
	}
	return &m, nil
}

// all returns every file m lists.
func (m *manifest) all() []manifestFile {
	all := append([]manifestFile{m.Database}, m.Files...)
	if m.SecretsKey != nil {
		all = append(all, *m.SecretsKey)
	}
	return all
}

// restoreInto copies the verified backup from into the empty directory
// data, then checks the copied database against the manifest's counts.
func restoreInto(ctx context.Context, from, data string, m *manifest) error {
	if len(m.Files) > 0 {
		if err := os.Mkdir(filepath.Join(data, engine.FilesDir), 0o750); err != nil {
			return err
		}
	}
	for _, f := range m.all() {
		rel := filepath.FromSlash(f.Path)
		mode := os.FileMode(0o600)
		got, err := copyFile(filepath.Join(from, rel), filepath.Join(data, rel), mode)
		if err != nil {
			return err
		}
		if got != f.SHA256 {
			return fmt.Errorf("%s changed while it was restored", f.Path)
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, engine.DatabaseFile)+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	counts, err := countTables(ctx, db)
	if err != nil {
		return fmt.Errorf("restored database: %w", err)
	}
	if !maps.Equal(counts, m.Counts) {
		tables := slices.Sorted(maps.Keys(m.Counts))
		for _, t := range tables {
			if counts[t] != m.Counts[t] {
				return fmt.Errorf("restored database: table %s has %d rows, the manifest says %d", t, counts[t], m.Counts[t])
			}
		}
		return errors.New("restored database: its tables are not the manifest's")
	}
	return nil
}

// copyFile copies src to the new file dst, synced, and returns the hex
// SHA-256 of what it wrote.
func copyFile(src, dst string, mode os.FileMode) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return "", err
	}
	h := newSum()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return h.hex(), err
}

// clearDir removes what a failed restore wrote in dir, leaving it empty.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}
