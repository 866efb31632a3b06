package sqlite

import "os"

// The WAL-index header, read without SQLite. In WAL mode every connection
// to the database, in any process, shares the WAL-index: the file
// DATABASE-shm, which each maps into memory. Its first 48 bytes are the
// header of the WAL (https://www.sqlite.org/walformat.html, "The WAL-Index
// Header"): iVersion, iChange (incremented by every transaction that
// commits), mxFrame (the last valid frame), nPage, the salts and the
// checksums. A commit becomes visible to readers when its writer stores
// the new header, and a reader starts its transaction by reading the
// header; the header is therefore the commit point, and an unchanged header
// proves that nothing was committed. The format is shared by every SQLite
// version that may open the same database at the same time, so it does not
// change.
//
// The header is stored twice, at offsets 0 and 48. A writer stores the
// second copy, then a memory barrier, then the first; so once the first
// copy is read unchanged, no commit completed since it was last read. A
// read that overlaps a writer's store may see some bytes changed: it then
// differs from the last reading and the caller takes the slow path, which
// is always correct. A read that sees every byte unchanged began before the
// commit completed, and is ordered before it.

// walHeaderWords is the length of one copy of the WAL-index header, in
// 64-bit words.
const walHeaderWords = 6

// walHeader is one copy of the WAL-index header, compared as a whole.
type walHeader [walHeaderWords]uint64

// walIndex is a read-only mapping of the WAL-index file's first page, or
// nil where none could be made (the caller then reads through SQLite).
//
// The descriptor of the file stays open until close, which comes after
// every SQLite connection of the DB is closed: the locks SQLite holds on
// the WAL-index are POSIX record locks, which the system drops from the
// whole process when any descriptor of the file is closed. Closing one
// while the DB serves would let another process (canvasd keys, export or
// backup beside the server) take the WAL-index for unused and
// reinitialize it under the server's connections, which then fail with
// SQLITE_IOERR_IN_PAGE.
type walIndex struct {
	mem  []byte   // the mapping; its first 48 bytes are the header's first copy
	file *os.File // the WAL-index file, open until close (unix only)
}
