package sqlstore

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// Migrate calls apply for every migration of fsys (migrations/*.sql), in
// name order, stopping before the first whose name sorts at or after stop
// (none when stop is empty: a test builds a database as an older release
// left it). Each driver keeps its own files, and apply runs one of them
// unless it is recorded.
func Migrate(fsys fs.FS, stop string, apply func(name string) error) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if stop != "" && name >= stop {
			break
		}
		if err := apply(name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// ErrNewerDatabase is the error of opening a database that records a
// migration this binary does not embed: a newer release migrated it. The
// store refuses it, changing nothing, rather than run older code on a
// schema it does not know.
var ErrNewerDatabase = errors.New("the database was migrated by a newer release of canvasd")

// CheckKnown returns ErrNewerDatabase, naming the first unknown
// migration and the newest known one, unless every name in recorded (as
// the driver records them: with or without the "migrations/" directory)
// is a migration of fsys.
func CheckKnown(fsys fs.FS, recorded []string) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, name := range names {
		known[path.Base(name)] = true
	}
	sort.Strings(names)
	var unknown []string
	for _, name := range recorded {
		if !known[path.Base(name)] {
			unknown = append(unknown, path.Base(name))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	newest := "none"
	if len(names) > 0 {
		newest = path.Base(names[len(names)-1])
	}
	return fmt.Errorf("%w: it records migration %s (and %d more), this binary knows migrations up to %s; "+
		"run a canvasd at least as new as the one that migrated it (nothing was changed)",
		ErrNewerDatabase, unknown[0], len(unknown)-1, newest)
}
