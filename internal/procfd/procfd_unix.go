//go:build unix

package procfd

import (
	"os"
	"strconv"
	"syscall"
)

// Inheritable returns the descriptors above 2 that dir lists (dir is
// /proc/self/fd or /dev/fd) and that this process holds without
// close-on-exec, in the order dir lists them, each with its descriptor
// flags. A name that is not a number, and a descriptor closed since dir
// was read, are passed over. The error is that of reading dir.
func Inheritable(dir string) ([]FD, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var fds []FD
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 {
			continue
		}
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC != 0 {
			continue
		}
		fds = append(fds, FD{Num: fd, Flags: flags})
	}
	return fds, nil
}
