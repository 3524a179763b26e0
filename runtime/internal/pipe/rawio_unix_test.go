//go:build unix

package pipe

import (
	"io"
	"os"
	"testing"
)

// The pipes the proxy reads and writes are raw pipes: if Raw fell back to
// the plain file (a method missing for the interface asked for), every call
// would wake Go's monitor thread again, and nothing else would show it.
func TestRawIOWrapsPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := Raw[io.WriteCloser](w).(*rawPipe); !ok {
		t.Error("Raw(io.WriteCloser) did not wrap a non-blocking pipe")
	}
	if _, ok := Raw[io.Reader](r).(*rawPipe); !ok {
		t.Error("Raw(io.Reader) did not wrap a non-blocking pipe")
	}
	if _, ok := Raw[io.Writer](w).(deadliner); !ok {
		t.Error("a raw pipe lost its write deadline")
	}
	f, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := Raw[io.Writer](f).(*rawPipe); ok {
		t.Error("Raw wrapped a regular (blocking) file")
	}
	w.Close()
}
