package pipe

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Writer writes whole lines to one stream from many goroutines with
// combining: a writer that finds the stream idle writes at once, on its own
// goroutine (no hand-off to a writer goroutine, which costs a wake-up per
// message); lines that arrive while a write is under way are appended to a
// buffer that the writing goroutine sends next, in one system call.
//
// One goroutine, the stream's batcher, may also hold its own lines back
// (QueueLine) while it handles a burst of messages that are already read
// (hold, release): the goroutine that reads the client holds the server's
// stream, the one that reads the server holds the client's. Under load a
// burst of 64 requests then costs one write; alone a message is written as
// soon as it is handled. A line from anyone else (WriteLine) is never held:
// it goes out at once, with what is held before it.
type Writer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.Writer
	buf     []byte
	spare   []byte
	writing bool
	held    bool
	err     error

	// Before runs ahead of every write (the audit log's flush: every
	// record queued before a line was must be in the log before the line
	// leaves); its error fails the stream.
	Before func() error

	// limit bounds the buffer. failFast (the server's side) refuses a line
	// that would pass it, since a server that leaves that much unread is
	// not reading; otherwise (the client's side) writers wait.
	limit    int
	failFast bool
	// timeout, when set and the stream supports deadlines, bounds each
	// write: a write that times out has left part of a line in the
	// stream, so the stream is dead from then on.
	timeout time.Duration
	onFail  func(error)
}

type deadliner interface{ SetWriteDeadline(time.Time) error }

func NewWriter(w io.Writer, limit int, failFast bool, timeout time.Duration, onFail func(error)) *Writer {
	lw := &Writer{w: w, limit: limit, failFast: failFast, timeout: timeout, onFail: onFail}
	lw.cond = sync.NewCond(&lw.mu)
	return lw
}

// ErrBacklog is a line refused because the server left too much unread.
var ErrBacklog = errors.New("the server is not reading its input (too much is waiting for it)")

// WriteLine writes b (one or more complete lines), with any held lines
// before it. b may be reused once it returns.
func (lw *Writer) WriteLine(b []byte) error { return lw.put(b, false) }

// QueueLine is WriteLine for the stream's batcher: while it holds the
// stream, b waits for release (or for a line of someone else's).
func (lw *Writer) QueueLine(b []byte) error { return lw.put(b, true) }

func (lw *Writer) put(b []byte, mayHold bool) error {
	lw.mu.Lock()
	for {
		if lw.err != nil {
			err := lw.err
			lw.mu.Unlock()
			return err
		}
		if !lw.writing || len(lw.buf)+len(b) <= lw.limit {
			break
		}
		if lw.failFast {
			if len(lw.buf) < lw.limit {
				break // a large line, not a reader that stopped
			}
			lw.mu.Unlock()
			return ErrBacklog
		}
		lw.cond.Wait()
	}
	if lw.writing || mayHold && lw.held && len(lw.buf)+len(b) <= holdLimit {
		lw.buf = append(lw.buf, b...)
		lw.mu.Unlock()
		return nil
	}
	lw.writing = true
	if len(lw.buf) > 0 {
		// Held lines go first: a stream keeps its order.
		lw.buf = append(lw.buf, b...)
		b = nil
	}
	lw.mu.Unlock()
	return lw.drain(b)
}

// holdLimit bounds what hold keeps back: past it, lines are written.
const holdLimit = 256 << 10

// Hold keeps lines in the buffer until release. Only the stream's batcher
// calls it, and only while it handles messages it has already read.
func (lw *Writer) Hold() {
	lw.mu.Lock()
	lw.held = true
	lw.mu.Unlock()
}

// Release writes what hold kept back.
func (lw *Writer) Release() error {
	lw.mu.Lock()
	lw.held = false
	if lw.writing || len(lw.buf) == 0 || lw.err != nil {
		err := lw.err
		lw.mu.Unlock()
		return err
	}
	lw.writing = true
	lw.mu.Unlock()
	return lw.drain(nil)
}

// drain writes b and then the buffer until it is empty; the caller set
// writing, under mu, and does not hold mu. A caller's goroutine does not
// wait for a full stream: when the stream takes only part (a reader that
// is slow or stalled), what is left goes to a goroutine of its own, which
// waits (up to the timeout), and the caller goes on: the reader that wrote
// a request must not stop answering pings because the server stopped
// reading.
func (lw *Writer) drain(b []byte) error { return lw.drainFrom(b, false) }

func (lw *Writer) drainFrom(b []byte, wait bool) error {
	var err error
	pending, ours := b, false // ours: pending is a buffer of lw's, not the caller's
	lw.mu.Lock()
	for {
		if len(pending) == 0 {
			if len(lw.buf) == 0 {
				break
			}
			// spare is handed over, not shared: lines appended while
			// pending is written must not land in pending's array.
			pending, ours = lw.buf, true
			lw.buf, lw.spare = lw.spare[:0], nil
		}
		lw.mu.Unlock()
		var rest []byte
		rest, err = lw.send(pending, wait)
		lw.mu.Lock()
		if lw.err != nil {
			// Aborted meanwhile: nothing more goes out.
			lw.writing = false
			lw.cond.Broadcast()
			err := lw.err
			lw.mu.Unlock()
			return err
		}
		if err == nil && len(rest) > 0 {
			// Full: the rest goes first, then what came meanwhile.
			lw.buf = append(append(make([]byte, 0, len(rest)+len(lw.buf)), rest...), lw.buf...)
			lw.mu.Unlock()
			go lw.drainFrom(nil, true) // writing stays set: the goroutine owns the stream
			return nil
		}
		if ours && cap(pending) <= 1<<20 {
			lw.spare = pending[:0]
		}
		pending = nil
		lw.cond.Broadcast()
		if err != nil {
			break
		}
	}
	lw.writing = false
	if err != nil && lw.err == nil {
		lw.err = err
		lw.buf = nil
	}
	lw.cond.Broadcast()
	lw.mu.Unlock()
	if err != nil && lw.onFail != nil {
		lw.onFail(err)
	}
	return err
}

// send writes b after the before hook. Without wait, a stream that can
// take only part of b without waiting (tryWriter) returns the rest.
func (lw *Writer) send(b []byte, wait bool) ([]byte, error) {
	if lw.Before != nil {
		if err := lw.Before(); err != nil {
			return nil, err
		}
	}
	if tw, ok := lw.w.(tryWriter); ok && !wait {
		n, err := tw.tryWrite(b)
		return b[n:], err
	}
	return nil, lw.write(b)
}

// tryWriter writes what the stream takes without waiting (rawPipe).
type tryWriter interface{ tryWrite(b []byte) (int, error) }

// write writes all of b. With a timeout, the reader must take something
// within each timeout: a server that reads slowly but steadily is waited
// for, one that stopped reading fails the stream. The deadline is cleared
// after the write (unless the stream was aborted meanwhile, which set its
// own): a later tryWrite would fail on a deadline long past.
func (lw *Writer) write(b []byte) error {
	d, ok := lw.w.(deadliner)
	if lw.timeout <= 0 || !ok {
		_, err := lw.w.Write(b)
		return err
	}
	for {
		// Under mu, so that an abort (which sets its own, immediate
		// deadline) is never undone.
		lw.mu.Lock()
		if lw.err != nil {
			err := lw.err
			lw.mu.Unlock()
			return err
		}
		derr := d.SetWriteDeadline(time.Now().Add(lw.timeout))
		lw.mu.Unlock()
		if derr != nil {
			_, err := lw.w.Write(b) // not pollable: no deadline to have
			return err
		}
		n, err := lw.w.Write(b)
		lw.mu.Lock()
		aborted := lw.err != nil
		if !aborted {
			_ = d.SetWriteDeadline(time.Time{})
		}
		lw.mu.Unlock()
		if errors.Is(err, os.ErrDeadlineExceeded) && n > 0 && !aborted {
			b = b[n:] // read from within the timeout: a fresh one for the rest
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !aborted {
			return fmt.Errorf("the server has not read its input for %v", lw.timeout)
		}
		return err
	}
}

// Flushed waits until every line handed to the stream is written (or the
// stream failed), at most timeout; it reports whether they were.
func (lw *Writer) Flushed(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		lw.mu.Lock()
		for (lw.writing || len(lw.buf) > 0) && lw.err == nil {
			lw.cond.Wait()
		}
		lw.mu.Unlock()
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Abort fails every later write and wakes writers waiting for room; a write
// under way gets an immediate deadline when the stream has deadlines.
func (lw *Writer) Abort(err error) {
	lw.mu.Lock()
	if lw.err == nil {
		lw.err = err
	}
	lw.buf = nil
	lw.cond.Broadcast()
	if d, ok := lw.w.(deadliner); ok {
		_ = d.SetWriteDeadline(time.Now())
	}
	lw.mu.Unlock()
}
