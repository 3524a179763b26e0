//go:build unix && !aix && !linux

package lockedfile

import "golang.org/x/sys/unix"

// flockNow is flock(2) for an operation that does not wait (LOCK_NB or
// LOCK_UN). EINTR is retried.
func flockNow(fd uintptr, how int) error {
	for {
		if err := unix.Flock(int(fd), how); err != unix.EINTR {
			return err
		}
	}
}
