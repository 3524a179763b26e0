//go:build unix

package runtime

import (
	"os"
	"syscall"

	"github.com/mcpform/mcpform/internal/mutation"
)

// Pollable returns f as a file Go's poller waits on, when f is a pipe or a
// socket (what a client connects `mcpform run` through). A client's pipe
// arrives in blocking mode, so every read of the client's next message
// parks an OS thread with its scheduler slot; the requests it hands to
// other goroutines then wait for the runtime to notice, which showed as
// ~150 µs added per call. Terminals and files are returned as they are.
//
// The copy is close-on-exec, made so atomically (F_DUPFD_CLOEXEC): a
// plain dup would be inherited by the server, which could then write to
// the client past the proxy (docs/GUARANTEES.md, section 1).
func Pollable(f *os.File) *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return f
	}
	if mode := st.Mode & syscall.S_IFMT; mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK {
		return f
	}
	cmd := uintptr(syscall.F_DUPFD_CLOEXEC)
	if mutation.Off("dupcloexec") {
		cmd = syscall.F_DUPFD // a copy every child inherits
	}
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), cmd, 0)
	if errno != 0 {
		return f
	}
	fd := int(r)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
