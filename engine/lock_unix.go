//go:build unix

package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes the exclusive lock of the data directory dir: an flock on
// dir/LockFile, which the system drops when the process ends, however it
// ends. The file names the holder's process id. A directory another
// process (or another Engine of this process) holds is ErrDataDirHeld.
// unlock releases the lock; locked is always true here.
func lockDir(dir string) (unlock func() error, locked bool, err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, heldError(dir, strings.TrimSpace(string(holder)))
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	// The process id is a courtesy for the operator; the lock is the flock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f.Close, true, nil
}

// heldError is ErrDataDirHeld for dir, naming the holder's process id when
// it is known.
func heldError(dir, pid string) error {
	if _, err := strconv.Atoi(pid); err == nil {
		return fmt.Errorf("%w: %s (process %s)", ErrDataDirHeld, dir, pid)
	}
	return fmt.Errorf("%w: %s", ErrDataDirHeld, dir)
}
