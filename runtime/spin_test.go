//go:build linux

package runtime

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// spinPipes returns two raw pipes' read ends sharing a spinner with the
// given window, and their write ends.
func spinPipes(t *testing.T, window time.Duration) (a, b *rawPipe, wa, wb *os.File) {
	t.Helper()
	ra, wa, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rb, wb, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ra.Close(); wa.Close(); rb.Close(); wb.Close() })
	a, _ = rawIO[io.Reader](ra).(*rawPipe)
	b, _ = rawIO[io.Reader](rb).(*rawPipe)
	if a == nil || b == nil {
		t.Fatal("os.Pipe's read ends are not raw pipes")
	}
	if spinOver(window, a, b) == nil {
		t.Fatal("no spinner over two raw pipes")
	}
	return a, b, wa, wb
}

func fdOf(t *testing.T, p *rawPipe) int32 {
	var fd int32
	if err := p.rc.Control(func(f uintptr) { fd = int32(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// A spinning reader takes its own pipe's message, parks at once for
// another pipe's (its reader needs the scheduler to wake it), and parks
// when the window has passed with nothing to read.
func TestSpinnerWait(t *testing.T) {
	a, b, wa, wb := spinPipes(t, time.Minute)
	go func() {
		time.Sleep(5 * time.Millisecond)
		wa.Write([]byte("x\n"))
	}()
	if !a.spin.wait(fdOf(t, a)) {
		t.Fatal("wait gave up although its own pipe got a message within the window")
	}
	wb.Write([]byte("y\n"))
	done := make(chan bool)
	go func() { done <- b.spin.wait(fdOf(t, a)) }()
	select {
	case own := <-done:
		// a still holds "x": both are ready, and a's own message wins.
		if !own {
			t.Fatal("wait parked although its own pipe had a message")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait spun on although its own pipe had a message")
	}
	if _, err := a.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	go func() { done <- a.spin.wait(fdOf(t, a)) }()
	select {
	case own := <-done:
		if own {
			t.Fatal("wait reported its own pipe ready; only the other one was")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait spun on (a minute's window) although another pipe had a message")
	}

	short, _, _, _ := spinPipes(t, time.Millisecond)
	go func() { done <- short.spin.wait(fdOf(t, short)) }()
	select {
	case own := <-done:
		if own {
			t.Fatal("wait reported an empty pipe ready")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait spun past its window")
	}
}

// A read that spins, then parks, still gets a message that comes late, and
// still honours a read deadline and a close: spinning happens inside the
// file's read lock, so neither may be lost.
func TestSpinningReads(t *testing.T) {
	a, _, wa, _ := spinPipes(t, 200*time.Microsecond)
	go func() {
		time.Sleep(20 * time.Millisecond) // long after the window
		wa.Write([]byte("late\n"))
	}()
	buf := make([]byte, 16)
	n, err := a.Read(buf)
	if err != nil || string(buf[:n]) != "late\n" {
		t.Fatalf("Read = %q, %v; want the late message", buf[:n], err)
	}

	a.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := a.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %v; want a deadline error", err)
	}
	a.SetReadDeadline(time.Time{})

	b, _, _, _ := spinPipes(t, 200*time.Microsecond)
	errc := make(chan error, 1)
	go func() {
		_, err := b.Read(buf)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	b.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Read of a closed pipe returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of a closed pipe did not return")
	}
}
