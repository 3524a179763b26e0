//go:build unix

package audit

import (
	"os"
	"syscall"
	"unsafe"
)

// The audit log's append (lock, size, write, unlock) is on the path of
// every request, so its system calls are raw, like rawPipe's: a call through
// the syscall package wakes the runtime's monitor thread after every idle
// moment. Only a lock held by another run process is waited for through
// the scheduler. The file is a regular file: its writes go to the page
// cache.

// lockFile takes an exclusive advisory lock on f, waiting for other run
// processes appending to the same audit log.
func lockFile(f *os.File) error {
	fd := f.Fd()
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_FLOCK, fd, syscall.LOCK_EX|syscall.LOCK_NB, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			for {
				err := syscall.Flock(int(fd), syscall.LOCK_EX)
				if err != syscall.EINTR {
					return err
				}
			}
		}
		return e
	}
}

func unlockFile(f *os.File) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_FLOCK, f.Fd(), syscall.LOCK_UN, 0); e != 0 {
		return e
	}
	return nil
}

// appendAll writes b to f, opened with O_APPEND, in one write when it can.
func appendAll(f *os.File, b []byte) error {
	fd := f.Fd()
	for len(b) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[n:]
		case syscall.EINTR:
		default:
			return &os.PathError{Op: "write", Path: f.Name(), Err: e}
		}
	}
	return nil
}
