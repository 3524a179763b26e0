package runtime

import (
	"strings"
	"sync"
	"testing"
)

type recordingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, string(b))
	w.mu.Unlock()
	return len(b), nil
}

func (w *recordingWriter) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

// The batcher's own lines wait for its release and then go out in one
// write; a line of anyone else's never waits for a hold (the batcher may be
// blocked on something else), and takes the held lines out before it, so
// the stream keeps its order.
func TestLineWriterHold(t *testing.T) {
	var w recordingWriter
	lw := newLineWriter(&w, 1<<20, false, 0, nil)
	lw.hold()
	lw.queueLine([]byte("a\n"))
	lw.queueLine([]byte("b\n"))
	if got := w.all(); len(got) != 0 {
		t.Fatalf("held lines were written before release: %q", got)
	}
	if err := lw.release(); err != nil {
		t.Fatal(err)
	}
	if got := w.all(); len(got) != 1 || got[0] != "a\nb\n" {
		t.Fatalf("after release: %q, want one write of a and b", got)
	}

	lw.hold()
	lw.queueLine([]byte("c\n"))
	lw.writeLine([]byte("other\n")) // another goroutine's line
	if got := strings.Join(w.all(), ""); got != "a\nb\nc\nother\n" {
		t.Fatalf("a line of someone else's waited for the hold, or came out of order: %q", got)
	}
	lw.queueLine([]byte("d\n"))
	lw.release()
	if got := strings.Join(w.all(), ""); got != "a\nb\nc\nother\nd\n" {
		t.Fatalf("after the second release: %q", got)
	}
}
