//go:build unix

package runtime

import (
	"os"
	"syscall"
	"testing"
)

// The copy Pollable makes of the client's stream is close-on-exec: a server
// that inherited it could write to the client past the proxy
// (docs/GUARANTEES.md, section 1).
func TestPollableIsCloseOnExec(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, f := range []*os.File{r, w} {
		p := Pollable(f)
		if p == f {
			t.Fatalf("Pollable returned %s itself, not a pollable copy", f.Name())
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, p.Fd(), syscall.F_GETFD, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		if flags&syscall.FD_CLOEXEC == 0 {
			t.Errorf("Pollable's copy of %s (fd %d) is inherited by every process mcpform starts", f.Name(), p.Fd())
		}
		p.Close()
	}
}
