//go:build !unix

package sqlite

// openWALIndex maps nothing where the system offers no mmap: DataVersion
// then reads through SQLite every time.
func openWALIndex(string) *walIndex { return nil }

func (w *walIndex) header() walHeader { return walHeader{} }

func (w *walIndex) close() error { return nil }
