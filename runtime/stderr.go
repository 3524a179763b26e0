package runtime

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
)

// What reaches mcpform's stderr: its own diagnostics (logf, logLine), and
// the server's stderr line by line (lineEscaper), escaped so that a server
// cannot paint the user's terminal. What the server causes (its stderr, and
// the warnings about what it sent: denied requests, dropped messages) is
// rate-limited, so a server cannot push a flood through mcpform's stderr
// into the client's log: past a burst of stderrBurst lines, stderrRate
// lines a second, and a note of how many were not shown. mcpform's own
// accounts (a quarantine, a start failure) are never held back. The audit
// log records every denial either way.

const (
	stderrBurst = 200
	stderrRate  = 20 // lines a second, once the burst is spent
)

// stderrLimit serialises the run's writes to stderr and meters the
// limited ones (a token bucket).
type stderrLimit struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// write writes line to w, unless limited and over the rate; a note of the
// lines held back so far precedes the next line that is written.
func (l *stderrLimit) write(w interface{ Write([]byte) (int, error) }, line string, limited bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if limited {
		if l.last.IsZero() {
			l.tokens = stderrBurst
		} else {
			l.tokens = min(stderrBurst, l.tokens+now.Sub(l.last).Seconds()*stderrRate)
		}
		l.last = now
		if l.tokens < 1 {
			l.dropped++
			return
		}
		l.tokens--
	}
	l.noteDropped(w)
	fmt.Fprint(w, line)
}

// noteDropped writes how many lines were held back since the last note.
func (l *stderrLimit) noteDropped(w interface{ Write([]byte) (int, error) }) {
	if l.dropped > 0 {
		fmt.Fprintf(w, "mcpform run: %d lines caused by the server were not shown (at most %d a second are)\n", l.dropped, stderrRate)
		l.dropped = 0
	}
}

// logf writes one diagnostic line of mcpform's own to stderr, escaped as a
// whole: it may quote server text.
func (p *proxy) logf(format string, args ...any) {
	p.logLine(escape.String(fmt.Sprintf(format, args...)))
}

// warnf is logf for what the server caused (a denied request, a dropped
// message): rate-limited.
func (p *proxy) warnf(format string, args ...any) {
	line := fmt.Sprintf("mcpform run %s: %s\n", escape.String(p.name), escape.String(fmt.Sprintf(format, args...)))
	p.stderr.write(p.opts.Stderr, line, true, time.Now())
}

// logLine writes one line mcpform composed to stderr. The line quotes
// server text escaped at its source (a StartError's stderr tail), so it is
// made visible, not escaped again.
func (p *proxy) logLine(line string) {
	p.stderr.write(p.opts.Stderr, fmt.Sprintf("mcpform run %s: %s\n", escape.String(p.name), escape.Visible(line)), false, time.Now())
}

// flushStderr writes the note of lines held back, if any, at the end.
func (p *proxy) flushStderr() {
	p.stderr.mu.Lock()
	p.stderr.noteDropped(p.opts.Stderr)
	p.stderr.mu.Unlock()
}

// lineEscaper passes the server's stderr on line by line, escaped,
// prefixed and rate-limited.
type lineEscaper struct {
	p    *proxy
	mu   sync.Mutex
	part []byte
}

func (l *lineEscaper) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.part = append(l.part, b...)
			if len(l.part) > 4096 {
				l.emit()
			}
			break
		}
		l.part = append(l.part, b[:i]...)
		l.emit()
		b = b[i+1:]
	}
	return n, nil
}

func (l *lineEscaper) emit() {
	line := strings.TrimRight(string(l.part), "\r")
	l.part = l.part[:0]
	l.p.stderr.write(l.p.opts.Stderr, fmt.Sprintf("[%s] %s\n", escape.String(l.p.name), escape.String(line)), true, time.Now())
}

func (l *lineEscaper) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.emit()
	}
	l.p.flushStderr()
}
