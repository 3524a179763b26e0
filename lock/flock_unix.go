//go:build unix

package lock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes the advisory lock on the lock's directory: flock on the
// directory itself, so no lock file is left behind. A writer holds it for
// as long as its temporary file exists, and the kernel drops it when the
// writer dies, so a temporary file seen under the lock is stale.
func lockDir(d *os.File) (unlock func(), err error) {
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { unix.Flock(int(d.Fd()), unix.LOCK_UN) }, nil
}

// tryLockDir is lockDir without waiting: held reports that another writer
// holds the lock.
func tryLockDir(d *os.File) (unlock func(), held bool, err error) {
	err = unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return func() { unix.Flock(int(d.Fd()), unix.LOCK_UN) }, false, nil
}

// syncDir makes the rename durable: "calling fsync() on the file does not
// necessarily ensure that the entry in the directory containing the file
// has also reached disk" (fsync(2)).
func syncDir(d *os.File) error { return d.Sync() }
