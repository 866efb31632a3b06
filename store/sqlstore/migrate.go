package sqlstore

import (
	"fmt"
	"io/fs"
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
