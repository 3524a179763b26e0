//go:build unix && !aix

package lockedfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes the exclusive advisory lock on f, waiting for as long as
// another process (or another open file of this one) holds it. f may be a
// directory. The first attempt does not wait and, on Linux, makes its
// system call raw, so an uncontended lock on a hot path does not go
// through the scheduler; only a lock held elsewhere is waited for.
func Lock(f *os.File) error {
	fd := f.Fd()
	err := flockNow(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err != unix.EWOULDBLOCK {
		return err
	}
	for {
		if err := unix.Flock(int(fd), unix.LOCK_EX); err != unix.EINTR {
			return err
		}
	}
}

// TryLock is Lock without waiting: ok is false, with a nil error, when
// someone else holds the lock.
func TryLock(f *os.File) (ok bool, err error) {
	err = flockNow(f.Fd(), unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases the lock Lock or TryLock took on f. Closing f releases
// it too.
func Unlock(f *os.File) error { return flockNow(f.Fd(), unix.LOCK_UN) }

// OpenDir opens what stands for directory dir's lock: on Unix the
// directory itself, so no lock file is left behind; name is used only on
// Windows (see there).
func OpenDir(dir, name string) (*os.File, error) { return os.Open(dir) }

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
