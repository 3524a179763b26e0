//go:build unix

package mcp

import (
	"os"
	"syscall"
	"testing"
)

// Both ways of marking descriptors close-on-exec (one close_range(2) where
// the kernel has it, the sweep elsewhere) leave a raw dup with the flag.
func TestCloseOnExecAbove2(t *testing.T) {
	for _, c := range []struct {
		name string
		mark func(t *testing.T)
	}{
		{"close_range", func(t *testing.T) {
			if !closeRangeOnExecAbove2() {
				t.Skip("no close_range(2) with CLOSE_RANGE_CLOEXEC here")
			}
		}},
		{"sweep", func(*testing.T) { sweepOnExecAbove2() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd := rawDup(t)
			if fdFlags(t, fd)&syscall.FD_CLOEXEC != 0 {
				t.Fatalf("control: the dup %d is already close-on-exec, so this test shows nothing", fd)
			}
			c.mark(t)
			if fdFlags(t, fd)&syscall.FD_CLOEXEC == 0 {
				t.Errorf("fd %d is still without close-on-exec", fd)
			}
			for _, std := range []int{0, 1, 2} {
				if fdFlags(t, std)&syscall.FD_CLOEXEC != 0 {
					t.Errorf("fd %d was marked close-on-exec; only those above 2 may be", std)
				}
			}
		})
	}
}

// rawDup returns a descriptor without close-on-exec, as a raw dup makes
// one or a client hands one down: a copy of a pipe's write end, closed
// with the pipe when the test ends.
func rawDup(t *testing.T) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	fd, err := syscall.Dup(int(w.Fd())) // no close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

func fdFlags(t *testing.T, fd int) uintptr {
	t.Helper()
	flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		t.Fatalf("F_GETFD %d: %v", fd, errno)
	}
	return flags
}
