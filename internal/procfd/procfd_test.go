//go:build unix

package procfd

import (
	"os"
	"syscall"
	"testing"
)

// dir is the descriptor directory of this system.
func dir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"/proc/self/fd", "/dev/fd"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	t.Skip("no descriptor directory")
	return ""
}

func has(fds []FD, fd int) bool {
	for _, f := range fds {
		if f.Num == fd {
			return true
		}
	}
	return false
}

// A descriptor made by a raw dup lacks close-on-exec and is listed until
// it gets the flag; descriptors Go opened, and 0, 1 and 2, never are.
func TestInheritable(t *testing.T) {
	d := dir(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd, err := syscall.Dup(int(w.Fd())) // no close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)

	fds, err := Inheritable(d)
	if err != nil {
		t.Fatal(err)
	}
	if !has(fds, fd) {
		t.Errorf("Inheritable(%q) = %v, want it to list the dup %d", d, fds, fd)
	}
	for _, f := range fds {
		if f.Num <= 2 {
			t.Errorf("Inheritable(%q) lists %d, which is not above 2", d, f.Num)
		}
		if f.Flags&syscall.FD_CLOEXEC != 0 {
			t.Errorf("Inheritable(%q) lists %d, which is close-on-exec", d, f.Num)
		}
	}
	if has(fds, int(r.Fd())) || has(fds, int(w.Fd())) {
		t.Errorf("Inheritable(%q) = %v lists a pipe end Go opened close-on-exec (%d, %d)", d, fds, r.Fd(), w.Fd())
	}

	syscall.CloseOnExec(fd)
	fds, err = Inheritable(d)
	if err != nil {
		t.Fatal(err)
	}
	if has(fds, fd) {
		t.Errorf("after CloseOnExec, Inheritable(%q) = %v still lists %d", d, fds, fd)
	}
}

// A directory that cannot be read is an error, not an empty list.
func TestInheritableMissingDir(t *testing.T) {
	if fds, err := Inheritable("/nonexistent-procfd-dir"); err == nil {
		t.Errorf("Inheritable of a missing directory = %v, nil; want an error", fds)
	}
}
