package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineSize caps one message (one line) at 4 MiB.
const DefaultMaxLineSize = 4 << 20

// LineTooLongError reports a line longer than the reader's cap. The line is
// refused, never truncated: a cut message could parse as a different one.
// Head and Tail are its first and last bytes (at most headSize and
// tailSize), kept so that a proxy can tell which request the refused answer
// was for (AnswerIDs) without trusting the rest.
type LineTooLongError struct {
	Limit      int
	Head, Tail []byte
}

// headSize and tailSize are how much of a refused line LineTooLongError
// keeps.
const (
	headSize = 1 << 10
	tailSize = 256
)

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("message longer than %d bytes", e.Limit)
}

// A Reader splits a stream into newline-delimited messages (the stdio
// transport: "Messages are delimited by newlines, and MUST NOT contain
// embedded newlines"), each at most a fixed size.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// NewReader returns a Reader of r with a cap of maxLine bytes per line
// (DefaultMaxLineSize when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineSize
	}
	size := 64 << 10
	if maxLine < size {
		size = max(maxLine+1, 16)
	}
	return &Reader{br: bufio.NewReaderSize(r, size), max: maxLine}
}

// ReadLine returns the next non-blank line without its line ending. The
// slice is valid only until the next call. A line over the cap returns a
// *LineTooLongError once the line has been read to its end (without keeping
// more than its head and tail); the next call resumes after that line. At
// the end of the stream it returns io.EOF; a last line without a newline is
// returned first.
func (r *Reader) ReadLine() ([]byte, error) {
	for {
		line, err := r.next()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimLeft(line, " \t\r")) == 0 {
			continue // blank lines carry nothing
		}
		return line, nil
	}
}

// Buffered reports whether a whole non-blank line is already buffered, so
// that the next ReadLine returns without reading: a reader that batches its
// output writes it once this turns false, before it would wait.
func (r *Reader) Buffered() bool {
	b, _ := r.br.Peek(r.br.Buffered())
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		if len(bytes.TrimLeft(b[:i], " \t\r")) > 0 {
			return true
		}
		b = b[i+1:] // a blank line, which ReadLine skips
	}
}

func (r *Reader) next() ([]byte, error) {
	// Fast path: the whole line is in bufio's buffer and is returned
	// without a copy.
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		if len(line)-1 > r.max {
			return nil, r.tooLong(trimEOL(line), nil)
		}
		return trimEOL(line), nil
	}
	if err != bufio.ErrBufferFull {
		if err == io.EOF && len(line) > 0 {
			if len(line) > r.max {
				return nil, r.tooLong(line, nil)
			}
			return trimEOL(line), nil
		}
		return nil, err
	}
	r.buf = append(r.buf[:0], line...)
	for {
		if len(r.buf) > r.max {
			return nil, r.skipRest()
		}
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
		switch {
		case err == nil:
			if len(r.buf)-1 > r.max {
				return nil, r.tooLong(trimEOL(r.buf), nil)
			}
			return trimEOL(r.buf), nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(r.buf) > 0:
			if len(r.buf) > r.max {
				return nil, r.tooLong(r.buf, nil)
			}
			return trimEOL(r.buf), nil
		default:
			return nil, err
		}
	}
}

// tooLong is the error for a line over the cap: line (or its start, with
// more read since into tail) with its head and tail kept.
func (r *Reader) tooLong(line, tail []byte) *LineTooLongError {
	e := &LineTooLongError{Limit: r.max, Head: bytes.Clone(line[:min(len(line), headSize)])}
	if tail == nil {
		tail = line[max(0, len(line)-tailSize):]
	}
	e.Tail = bytes.Clone(tail)
	return e
}

// skipRest reads the rest of a line that passed the cap (r.buf holds its
// start) to its end, keeping only its first and last bytes, and returns its
// error.
func (r *Reader) skipRest() *LineTooLongError {
	head := append(make([]byte, 0, headSize), r.buf[:min(len(r.buf), headSize)]...)
	tail := append(make([]byte, 0, 2*tailSize), r.buf[max(0, len(r.buf)-tailSize):]...)
	for {
		chunk, err := r.br.ReadSlice('\n')
		if n := headSize - len(head); n > 0 {
			head = append(head, trimEOL(chunk[:min(len(chunk), n)])...)
		}
		tail = append(tail, chunk...)
		if len(tail) > tailSize {
			tail = append(tail[:0], tail[len(tail)-tailSize:]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			// The line's end, or the stream's: either way the line is
			// over (an error is the next ReadLine's to report).
			return &LineTooLongError{Limit: r.max, Head: head, Tail: trimEOL(tail)}
		}
	}
}

func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}
