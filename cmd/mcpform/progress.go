package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/plan"
)

// progress reports probes on stderr while they run, as terraform reports a
// refresh: a server started through `go run`, npx or uvx may take minutes
// to answer, and silence then looks like a hang.
//
// Without a terminal it prints one line per event: the probe begins, each
// phase it enters (mcp.Phase), a heartbeat when a phase lasts (after 10s,
// 30s, 60s, then every minute, as terraform's "Still creating... [10s
// elapsed]"), and its end, with counts or a short reason. On a terminal it
// keeps a single status line of counts up to date, rewritten in place with
// carriage returns and spaces (no escape sequences, so -no-color and
// TERM=dumb need nothing else), cleared before each permanent line and at
// the end; only the ends are permanent lines there.
//
// Everything goes to the writer it was given, stderr: the plan and the
// report on stdout (-json, -markdown) are never touched.
type progress struct {
	w     io.Writer
	tty   bool
	width int // the terminal's columns; the status line stays shorter
	now   func() time.Time

	mu      sync.Mutex
	total   int // servers expected; 0 when unknown
	done    int
	failed  int
	running map[string]*probeState
	shown   int // the status line's length on screen, 0 when none
	closed  bool

	quit chan struct{} // closed by Close: the ticking goroutine ends
}

// probeState is one running probe.
type probeState struct {
	name  string // escaped
	begun time.Time
	phase mcp.Phase // 0 until the first phase
	since time.Time // when phase was entered
	beats int       // heartbeats printed in this phase
}

// heartbeats are when a phase that lasts gets a line; after the last, one
// more every heartbeatEvery.
var heartbeats = [...]time.Duration{10 * time.Second, 30 * time.Second, 60 * time.Second}

const heartbeatEvery = time.Minute

// heartbeatAt is how long a phase has lasted when it gets heartbeat n (0 is
// the first).
func heartbeatAt(n int) time.Duration {
	if n < len(heartbeats) {
		return heartbeats[n]
	}
	return heartbeats[len(heartbeats)-1] + time.Duration(n-len(heartbeats)+1)*heartbeatEvery
}

// slowStartHint says why a server may take long to answer its handshake.
const slowStartHint = "the command may be compiling or downloading: go run, npx, uvx"

// startProgress reports on io's stderr probes of total servers (0 when not
// known ahead), with a status line when stderr is a terminal, and ticks
// until Close.
func startProgress(io *stdio, total int) *progress {
	tty, width := false, 0
	if f, ok := io.err.(*os.File); ok && isTerminal(f) && io.getenv("TERM") != "dumb" {
		tty, width = true, termWidth(f)
	}
	p := newProgress(io.err, tty, width, total, time.Now)
	every := time.Second
	if tty {
		// Often enough that the elapsed seconds never skip one.
		every = 500 * time.Millisecond
	}
	t := time.NewTicker(every)
	go func() {
		defer t.Stop()
		p.run(t.C)
	}()
	return p
}

// newProgress is a progress without its ticking goroutine: run (or tick)
// drives it, and now is its clock.
func newProgress(w io.Writer, tty bool, width, total int, now func() time.Time) *progress {
	if width <= 0 {
		width = 80
	}
	return &progress{w: w, tty: tty, width: width, now: now, total: total,
		running: map[string]*probeState{}, quit: make(chan struct{})}
}

// run ticks on each value from ticks until Close.
func (p *progress) run(ticks <-chan time.Time) {
	for {
		select {
		case <-p.quit:
			return
		case <-ticks:
			p.tick()
		}
	}
}

// Close stops the ticking and clears the status line. Nothing is printed
// after it: a tick that comes late finds it closed.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.quit)
	p.clear()
}

// expect sets how many servers will be probed, for the status line; it is
// plan.Options.Probing.
func (p *progress) expect(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.total = n
		p.redraw()
	}
}

// probe is the plan.Progress: a probe begins or ends.
func (p *progress) probe(name string, done bool, r *plan.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if !done {
		now := p.now()
		p.running[name] = &probeState{name: escape.String(name), begun: now, since: now}
		if !p.tty {
			fmt.Fprintf(p.w, "%s: probing...\n", escape.String(name))
		}
		p.redraw()
		return
	}
	delete(p.running, name)
	var line string
	if r.Err != nil {
		p.failed++
		line = fmt.Sprintf("%s: failed after %s: %s", escape.String(name), roundDuration(r.Duration), failReason(r.Err))
	} else {
		p.done++
		line = fmt.Sprintf("%s: done in %s: %s", escape.String(name), roundDuration(r.Duration), surfaceCounts(r.Entry))
	}
	p.println(line)
}

// phase is the OnPhase of plan.Options: name's probe entered ph. A phase
// already passed (a restart, or the era fallback's second probe) is not
// news.
func (p *progress) phase(name string, ph mcp.Phase) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.running[name]
	if p.closed || s == nil || ph <= s.phase {
		return
	}
	s.phase, s.since, s.beats = ph, p.now(), 0
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %s\n", s.name, phaseLine(ph))
	}
	p.redraw()
}

// phaseOf is phase for one server, as a plan.Target's OnPhase.
func (p *progress) phaseOf(name string) func(mcp.Phase) {
	return func(ph mcp.Phase) { p.phase(name, ph) }
}

// tick prints the heartbeats that are due, or brings the status line's
// seconds up to date.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.tty {
		p.redraw()
		return
	}
	now := p.now()
	for _, s := range p.byName() {
		lasted := now.Sub(s.since)
		if lasted < heartbeatAt(s.beats) {
			continue
		}
		// One line however many were missed (a stalled machine), and
		// the next one after this one's time.
		for lasted >= heartbeatAt(s.beats) {
			s.beats++
		}
		fmt.Fprintf(p.w, "%s: %s\n", s.name, stillLine(s.phase, lasted))
	}
}

func (p *progress) byName() []*probeState {
	var all []*probeState
	for _, s := range p.running {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	return all
}

// println prints a permanent line, under the status line's place.
func (p *progress) println(line string) {
	p.clear()
	fmt.Fprintln(p.w, line)
	p.redraw()
}

// clear blanks the status line and leaves the cursor at its start.
func (p *progress) clear() {
	if p.shown > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.shown))
		p.shown = 0
	}
}

// redraw rewrites the status line (a terminal only).
func (p *progress) redraw() {
	if !p.tty || p.total == 0 && len(p.running) == 0 && p.done+p.failed == 0 {
		return
	}
	line := p.statusLine()
	// One column short of the width: a line that fills it wraps on some
	// terminals, and a carriage return would then go back to the wrong row.
	if n := p.width - 1; utf8.RuneCountInString(line) > n {
		r := []rune(line)
		line = string(r[:n-1]) + "…"
	}
	n := utf8.RuneCountInString(line)
	pad := ""
	if p.shown > n {
		pad = strings.Repeat(" ", p.shown-n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.shown = n
}

// statusLine is "Probing 5 servers: 2 done, 1 failed, 2 in progress
// (github: listing, 12s)": the counts, and the probe running longest.
func (p *progress) statusLine() string {
	total := max(p.total, p.done+p.failed+len(p.running))
	var b strings.Builder
	fmt.Fprintf(&b, "Probing %s: %d done, %d failed, %d in progress", plural(total, "server", "servers"), p.done, p.failed, len(p.running))
	if waiting := total - p.done - p.failed - len(p.running); waiting > 0 {
		fmt.Fprintf(&b, ", %d waiting", waiting)
	}
	var oldest *probeState
	for _, s := range p.byName() {
		if oldest == nil || s.begun.Before(oldest.begun) {
			oldest = s
		}
	}
	if oldest != nil {
		ph := "starting"
		if oldest.phase != 0 {
			ph = oldest.phase.String()
		}
		lasted := p.now().Sub(oldest.begun)
		fmt.Fprintf(&b, " (%s: %s, %s", oldest.name, ph, lasted.Truncate(time.Second))
		if oldest.phase <= mcp.PhaseHandshake && lasted >= heartbeats[0] {
			// Short: the line has one row, and the count must fit.
			b.WriteString("; compiling or downloading?")
		}
		b.WriteString(")")
	}
	return b.String()
}

// phaseLine is the line for a phase entered.
func phaseLine(ph mcp.Phase) string {
	switch ph {
	case mcp.PhaseStarting:
		return "started"
	case mcp.PhaseHandshake:
		return "handshake..."
	case mcp.PhaseListing:
		return "listing..."
	}
	return ph.String()
}

// stillLine is the heartbeat of a phase that has lasted.
func stillLine(ph mcp.Phase, lasted time.Duration) string {
	d := lasted.Truncate(time.Second)
	switch ph {
	case 0, mcp.PhaseStarting:
		return fmt.Sprintf("still starting after %s", d)
	case mcp.PhaseHandshake:
		return fmt.Sprintf("still starting after %s: no answer to the handshake yet (%s)", d, slowStartHint)
	}
	return fmt.Sprintf("still %s after %s", ph, d)
}

// failReason is a failed probe's reason in one short line: "did not start",
// or the stage and the first line of the error with its hidden characters
// escaped (a server's words may be in it). escape.Visible, not String: the
// probe's errors escape what they quote already, and a backslash there
// must not be doubled.
func failReason(err error) string {
	if se := (*mcp.StartError)(nil); errors.As(err, &se) {
		return "did not start"
	}
	msg := err.Error()
	if pe := (*mcp.ProbeError)(nil); errors.As(err, &pe) && pe.Err != nil {
		msg = pe.Stage + ": " + pe.Err.Error()
	}
	first, _, _ := strings.Cut(msg, "\n")
	first = escape.Visible(first)
	const most = 160
	if r := []rune(first); len(r) > most {
		first = string(r[:most-1]) + "…"
	}
	return first
}

// surfaceCounts is "3 tools, 1 prompt": the tools always, the other kinds
// when there are some.
func surfaceCounts(e *lock.Entry) string {
	if e == nil {
		return "0 tools"
	}
	parts := []string{plural(len(e.Tools), "tool", "tools")}
	for _, k := range []struct {
		n         int
		one, many string
	}{
		{len(e.Prompts), "prompt", "prompts"},
		{len(e.Resources), "resource", "resources"},
		{len(e.ResourceTemplates), "resource template", "resource templates"},
	} {
		if k.n > 0 {
			parts = append(parts, plural(k.n, k.one, k.many))
		}
	}
	return strings.Join(parts, ", ")
}

// roundDuration shows a probe's time as a person reads it: 12ms, 1.2s, 27s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
