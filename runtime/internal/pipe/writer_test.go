package pipe

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
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
	lw := NewWriter(&w, 1<<20, false, 0, nil)
	lw.Hold()
	lw.QueueLine([]byte("a\n"))
	lw.QueueLine([]byte("b\n"))
	if got := w.all(); len(got) != 0 {
		t.Fatalf("held lines were written before release: %q", got)
	}
	if err := lw.Release(); err != nil {
		t.Fatal(err)
	}
	if got := w.all(); len(got) != 1 || got[0] != "a\nb\n" {
		t.Fatalf("after release: %q, want one write of a and b", got)
	}

	lw.Hold()
	lw.QueueLine([]byte("c\n"))
	lw.WriteLine([]byte("other\n")) // another goroutine's line
	if got := strings.Join(w.all(), ""); got != "a\nb\nc\nother\n" {
		t.Fatalf("a line of someone else's waited for the hold, or came out of order: %q", got)
	}
	lw.QueueLine([]byte("d\n"))
	lw.Release()
	if got := strings.Join(w.all(), ""); got != "a\nb\nc\nother\nd\n" {
		t.Fatalf("after the second release: %q", got)
	}
}

// gatedWriter blocks every Write until the test lets it through, and
// records what it wrote.
type gatedWriter struct {
	recordingWriter
	started chan struct{}
	proceed chan struct{}
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	w.started <- struct{}{}
	<-w.proceed
	return w.recordingWriter.Write(b)
}

// Lines appended while a large buffer is being written must not land in
// the array being written: the stream carries every line once, in order
// (the spare buffer is handed over, never shared with the live one).
func TestLineWriterLargeBufferKeepsLines(t *testing.T) {
	w := &gatedWriter{started: make(chan struct{}), proceed: make(chan struct{})}
	lw := NewWriter(w, 8<<20, false, 0, nil)
	// write runs a WriteLine that blocks in the stream, returning once it
	// has started writing.
	write := func(line string) chan struct{} {
		done := make(chan struct{})
		go func() { lw.WriteLine([]byte(line)); close(done) }()
		<-w.started
		return done
	}
	// Each round: a writer is in Write; lines queue behind it; then it
	// goes on to write them, from the buffer.
	done := write("a\n")
	lw.WriteLine([]byte("s\n")) // a small buffer, which becomes the spare
	w.proceed <- struct{}{}
	<-w.started // writing "s\n" from the buffer
	w.proceed <- struct{}{}
	<-done

	big := strings.Repeat("B", 1<<20+1<<19) + "\n" // over the 1 MiB kept as spare
	done = write("c\n")
	lw.WriteLine([]byte(big))
	w.proceed <- struct{}{}
	<-w.started // writing big from the buffer
	lw.WriteLine([]byte("eeee\n"))
	w.proceed <- struct{}{}
	<-w.started // writing "eeee\n" from the buffer
	lw.WriteLine([]byte("FFFF\n"))
	w.proceed <- struct{}{}
	<-w.started // writing "FFFF\n"
	w.proceed <- struct{}{}
	<-done

	want := "a\ns\nc\n" + big + "eeee\nFFFF\n"
	if got := strings.Join(w.all(), ""); got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the stream differs from the lines written at byte %d: got %q, want %q", i, got[i:min(len(got), i+20)], want[i:min(len(want), i+20)])
	}
}

// A reader that takes its input slowly but steadily is waited for, however
// long the whole backlog takes: the timeout is for a reader that stopped.
func TestLineWriterSlowReaderIsWaitedFor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	failed := make(chan error, 1)
	lw := NewWriter(Raw[io.Writer](w), 8<<20, true, time.Second, func(err error) { failed <- err })
	line := strings.Repeat("x", 8<<10-1) + "\n"
	const lines = 48
	for i := 0; i < lines; i++ { // 384 KiB: six pipes full
		if err := lw.WriteLine([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	buf := make([]byte, 8<<10)
	for got < lines*len(line) { // 8 KiB every 50 ms: 2.4 s for all, past the timeout
		time.Sleep(50 * time.Millisecond)
		select {
		case err := <-failed:
			t.Fatalf("the stream failed with a reader that never stopped: %v", err)
		default:
		}
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if !lw.Flushed(time.Second) {
		t.Fatal("the stream was not written")
	}
	w.Close()
}

// On the server's stream a large line is taken while the backlog is under
// the limit; only a backlog past it (a server not reading) is refused.
func TestLineWriterBacklogLimit(t *testing.T) {
	w := &gatedWriter{started: make(chan struct{}), proceed: make(chan struct{})}
	lw := NewWriter(w, 1<<20, true, 0, nil)
	big := strings.Repeat("x", 600<<10) + "\n"
	done := make(chan struct{})
	go func() { lw.WriteLine([]byte(big)); close(done) }()
	<-w.started // the first line is being written
	if err := lw.WriteLine([]byte(big)); err != nil {
		t.Fatalf("a second large line with an empty backlog: %v", err)
	}
	if err := lw.WriteLine([]byte(big)); err != nil {
		t.Fatalf("a third large line, 600 KiB waiting under a 1 MiB limit: %v", err)
	}
	if err := lw.WriteLine([]byte("y\n")); err != ErrBacklog {
		t.Fatalf("a line with 1.2 MiB waiting over a 1 MiB limit: %v, want ErrBacklog", err)
	}
	go func() {
		for range w.started {
			w.proceed <- struct{}{}
		}
	}()
	w.proceed <- struct{}{}
	<-done
	if !lw.Flushed(5 * time.Second) {
		t.Fatal("the backlog was not written")
	}
	close(w.started)
}
