//go:build unix

package runtime

import (
	"io"
	"os"
	"testing"
)

// The pipes the proxy reads and writes are raw pipes: if rawIO fell back to
// the plain file (a method missing for the interface asked for), every call
// would wake Go's monitor thread again, and nothing else would show it.
func TestRawIOWrapsPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := rawIO[io.WriteCloser](w).(*rawPipe); !ok {
		t.Error("rawIO(io.WriteCloser) did not wrap a non-blocking pipe")
	}
	if _, ok := rawIO[io.Reader](r).(*rawPipe); !ok {
		t.Error("rawIO(io.Reader) did not wrap a non-blocking pipe")
	}
	if _, ok := rawIO[io.Writer](w).(deadliner); !ok {
		t.Error("a raw pipe lost its write deadline")
	}
	f, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := rawIO[io.Writer](f).(*rawPipe); ok {
		t.Error("rawIO wrapped a regular (blocking) file")
	}
	w.Close()
}
