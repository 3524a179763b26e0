//go:build unix

package mcp

import (
	"syscall"

	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/internal/procfd"
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
//
// Where the kernel can mark them all in one call (close_range(2) with
// CLOSE_RANGE_CLOEXEC, Linux 5.11) it does; otherwise it walks the
// descriptors procfd lists.
func closeOnExecAbove2() {
	if mutation.Off("fdsweep") {
		return
	}
	if !closeRangeOnExecAbove2() {
		sweepOnExecAbove2()
	}
}

// sweepOnExecAbove2 is closeOnExecAbove2 one descriptor at a time.
func sweepOnExecAbove2() {
	fds, err := procfd.Inheritable("/proc/self/fd")
	if err != nil {
		if fds, err = procfd.Inheritable("/dev/fd"); err != nil {
			return
		}
	}
	for _, f := range fds {
		syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(f.Num), syscall.F_SETFD, f.Flags|syscall.FD_CLOEXEC)
	}
}
