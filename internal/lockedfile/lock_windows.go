//go:build windows

package lockedfile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Lock takes the exclusive lock on f, waiting for as long as another
// process holds it: LockFileEx on f's first byte. Windows enforces a
// locked byte against other processes' reads and writes, so f should hold
// no data; and it cannot be a directory (see OpenDir).
func Lock(f *os.File) error {
	_, err := lockFileEx(f, 0)
	return err
}

// TryLock is Lock without waiting: ok is false, with a nil error, when
// someone else holds the lock.
func TryLock(f *os.File) (ok bool, err error) {
	return lockFileEx(f, windows.LOCKFILE_FAIL_IMMEDIATELY)
}

func lockFileEx(f *os.File, flags uint32) (bool, error) {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|flags, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases the lock Lock or TryLock took on f.
func Unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// OpenDir opens what stands for directory dir's lock. Windows cannot lock
// a directory handle, so it is the file name in dir, created when missing
// and left there; name must not be a name the directory's users read.
func OpenDir(dir, name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644)
}

// syncDir does nothing: Windows has no fsync of a directory, and the
// rename (MoveFileEx) replaces the file in one step.
func syncDir(string) error { return nil }
