//go:build unix

package mcp

import (
	"os"
	"strconv"
	"syscall"

	"github.com/mcpform/mcpform/internal/mutation"
)

// closeOnExecAbove2 marks every descriptor of this process above 2
// close-on-exec before a server starts, so that the server gets fds 0, 1
// and 2 and nothing else (docs/GUARANTEES.md, section 1). os/exec passes
// only Stdin, Stdout, Stderr and ExtraFiles, and Go opens every file
// close-on-exec; what this catches is a descriptor made some other way
// (a raw dup) and one mcpform itself inherited without the flag from the
// client that started it, such as a copy of the client's own stdout.
// ExtraFiles still reach the child: os/exec duplicates them onto 3, 4, …
// in the child, which clears the flag on the copy.
func closeOnExecAbove2() {
	if mutation.Off("fdsweep") {
		return
	}
	names, err := readDirNames("/proc/self/fd")
	if err != nil {
		if names, err = readDirNames("/dev/fd"); err != nil {
			return
		}
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 {
			continue
		}
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 || flags&syscall.FD_CLOEXEC != 0 {
			continue
		}
		syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, flags|syscall.FD_CLOEXEC)
	}
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
