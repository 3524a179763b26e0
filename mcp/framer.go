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
type LineTooLongError struct {
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("message longer than %d bytes", e.Limit)
}

// A Reader splits a stream into newline-delimited messages (the stdio
// transport: "Messages are delimited by newlines, and MUST NOT contain
// embedded newlines"), each at most a fixed size.
type Reader struct {
	br      *bufio.Reader
	max     int
	buf     []byte
	discard bool // the previous line was too long: skip to its end first
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
// *LineTooLongError as soon as the cap is passed; the next call resumes
// after that line. At the end of the stream it returns io.EOF; a last line
// without a newline is returned first.
func (r *Reader) ReadLine() ([]byte, error) {
	for {
		if r.discard {
			if err := r.skipLine(); err != nil {
				return nil, err
			}
			r.discard = false
		}
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
	if r.discard {
		return false
	}
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
			return nil, &LineTooLongError{Limit: r.max}
		}
		return trimEOL(line), nil
	}
	if err != bufio.ErrBufferFull {
		if err == io.EOF && len(line) > 0 {
			if len(line) > r.max {
				return nil, &LineTooLongError{Limit: r.max}
			}
			return trimEOL(line), nil
		}
		return nil, err
	}
	r.buf = append(r.buf[:0], line...)
	for {
		if len(r.buf) > r.max {
			r.discard = true
			return nil, &LineTooLongError{Limit: r.max}
		}
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
		switch {
		case err == nil:
			if len(r.buf)-1 > r.max {
				return nil, &LineTooLongError{Limit: r.max}
			}
			return trimEOL(r.buf), nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(r.buf) > 0:
			if len(r.buf) > r.max {
				return nil, &LineTooLongError{Limit: r.max}
			}
			return trimEOL(r.buf), nil
		default:
			return nil, err
		}
	}
}

func (r *Reader) skipLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if err == nil {
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
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
