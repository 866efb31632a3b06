//go:build unix

package sqlite

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndexPage is how much of the WAL-index file is mapped: one page, which
// holds the header (SQLite maps the file in 32 KiB regions from offset 0).
const walIndexPage = 4096

// openWALIndex maps the WAL-index of the database at path (path + "-shm")
// read-only. It returns nil when the file cannot be mapped, for example
// before any connection put the database in WAL mode.
func openWALIndex(path string) *walIndex {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Size() < walIndexPage {
		f.Close()
		return nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, walIndexPage, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil
	}
	return &walIndex{mem: mem, file: f}
}

// header reads the header's first copy, each word atomically. The mapping
// is page aligned, so the words are aligned.
func (w *walIndex) header() walHeader {
	var h walHeader
	base := unsafe.Pointer(unsafe.SliceData(w.mem))
	for i := range h {
		h[i] = atomic.LoadUint64((*uint64)(unsafe.Add(base, i*8)))
	}
	return h
}

// close unmaps the WAL-index and closes its descriptor.
func (w *walIndex) close() error {
	if w == nil {
		return nil
	}
	return errors.Join(syscall.Munmap(w.mem), w.file.Close())
}
