package lockedfile

import "golang.org/x/sys/unix"

// flockNow is flock(2) for an operation that does not wait (LOCK_NB or
// LOCK_UN), made raw: a system call through the scheduler wakes the Go
// runtime's monitor thread after an idle moment, which the audit log's
// append, on the path of every request, should not pay. EINTR is retried.
func flockNow(fd uintptr, how int) error {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_FLOCK, fd, uintptr(how), 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}
