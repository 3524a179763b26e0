//go:build windows

package lock

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockDir takes the advisory lock for the lock's directory. Windows cannot
// lock a directory handle, so it locks a small file beside mcp.lock (its
// name is not a temporary file's, so removeStaleTemps leaves it). A writer
// holds it for as long as its temporary file exists, and Windows releases
// it when the writer dies, so a temporary file seen under the lock is stale.
func lockDir(d *os.File) (unlock func(), err error) {
	unlock, _, err = lockFile(d, 0)
	return unlock, err
}

// tryLockDir is lockDir without waiting: held reports that another writer
// holds the lock.
func tryLockDir(d *os.File) (unlock func(), held bool, err error) {
	return lockFile(d, windows.LOCKFILE_FAIL_IMMEDIATELY)
}

func lockFile(d *os.File, flags uint32) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(filepath.Join(d.Name(), ".mcp.lock.flock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|flags, 0, 1, 0, ol); err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return func() {
		windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
		f.Close()
	}, false, nil
}

// syncDir is a no-op: Windows has no fsync of a directory; the rename
// (MoveFileEx) replaces the lock in one step.
func syncDir(*os.File) error { return nil }
