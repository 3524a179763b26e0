package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// lineWriter writes whole lines to one stream from many goroutines with
// combining: a writer that finds the stream idle writes at once, on its own
// goroutine (no hand-off to a writer goroutine, which costs a wake-up per
// message); lines that arrive while a write is under way are appended to a
// buffer that the writing goroutine sends next, in one system call. Under
// load that turns 64 small writes into one; alone it adds nothing.
type lineWriter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.Writer
	buf     []byte
	spare   []byte
	writing bool
	err     error

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

func newLineWriter(w io.Writer, limit int, failFast bool, timeout time.Duration, onFail func(error)) *lineWriter {
	lw := &lineWriter{w: w, limit: limit, failFast: failFast, timeout: timeout, onFail: onFail}
	lw.cond = sync.NewCond(&lw.mu)
	return lw
}

// errBacklog is a line refused because the server left too much unread.
var errBacklog = errors.New("the server is not reading its input (too much is waiting for it)")

// writeLine writes b (one or more complete lines). b may be reused once it
// returns.
func (lw *lineWriter) writeLine(b []byte) error {
	lw.mu.Lock()
	for {
		if lw.err != nil {
			err := lw.err
			lw.mu.Unlock()
			return err
		}
		if len(lw.buf)+len(b) <= lw.limit || len(lw.buf) == 0 {
			break
		}
		if lw.failFast {
			lw.mu.Unlock()
			return errBacklog
		}
		lw.cond.Wait()
	}
	if lw.writing {
		lw.buf = append(lw.buf, b...)
		lw.mu.Unlock()
		return nil
	}
	lw.writing = true
	lw.mu.Unlock()
	err := lw.write(b)
	lw.mu.Lock()
	for err == nil && len(lw.buf) > 0 {
		out := lw.buf
		lw.buf = lw.spare[:0]
		lw.mu.Unlock()
		err = lw.write(out)
		lw.mu.Lock()
		if cap(out) <= 1<<20 {
			lw.spare = out[:0]
		}
		lw.cond.Broadcast()
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

func (lw *lineWriter) write(b []byte) error {
	if lw.timeout > 0 {
		if d, ok := lw.w.(deadliner); ok && d.SetWriteDeadline(time.Now().Add(lw.timeout)) == nil {
			_, err := lw.w.Write(b)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("the server has not read its input for %v", lw.timeout)
			}
			return err
		}
	}
	_, err := lw.w.Write(b)
	return err
}

// abort fails every later write and wakes writers waiting for room; a write
// under way gets an immediate deadline when the stream has deadlines.
func (lw *lineWriter) abort(err error) {
	lw.mu.Lock()
	if lw.err == nil {
		lw.err = err
	}
	lw.buf = nil
	lw.cond.Broadcast()
	lw.mu.Unlock()
	if d, ok := lw.w.(deadliner); ok {
		_ = d.SetWriteDeadline(time.Now())
	}
}
