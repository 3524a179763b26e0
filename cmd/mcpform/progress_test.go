package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/plan"
)

// clock is a fake clock for progress: it moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) set(d time.Duration) { c.t = time.Unix(1e9, 0).Add(d) }
func newClock() *clock               { c := &clock{}; c.set(0); return c }
func entry(tools, prompts, resources, templates int) *lock.Entry {
	return &lock.Entry{Tools: make([]lock.Item, tools), Prompts: make([]lock.Item, prompts),
		Resources: make([]lock.Item, resources), ResourceTemplates: make([]lock.Item, templates)}
}

func startErr() error {
	return &mcp.ProbeError{Server: "x", Stage: "initialize", Err: &mcp.StartError{Server: "x", Stage: "initialize", Exited: true, Err: mcp.ErrServerClosed}}
}

// TestProgressLines: without a terminal, every event is one line: the
// begin, each phase, the end with counts or a short reason (escaped), and
// nothing that moves a cursor.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	clk := newClock()
	p := newProgress(&out, false, 0, 3, clk.now)
	p.probe("github", false, nil)
	p.probe("memory", false, nil)
	p.phase("github", mcp.PhaseStarting)
	p.phase("github", mcp.PhaseHandshake)
	p.phase("memory", mcp.PhaseStarting)
	p.phase("github", mcp.PhaseHandshake) // server/discover, then initialize: no news
	p.phase("github", mcp.PhaseListing)
	p.phase("github", mcp.PhaseStarting) // the era fallback's second probe: no news
	p.probe("github", true, &plan.Result{Name: "github", Entry: entry(12, 1, 0, 2), Duration: 1234 * time.Millisecond})
	p.probe("memory", true, &plan.Result{Name: "memory", Err: startErr(), Duration: 27 * time.Second})
	p.probe("evil\u202e", false, nil)
	p.probe("evil\u202e", true, &plan.Result{Name: "evil\u202e", Duration: 5 * time.Millisecond,
		Err: &mcp.ProbeError{Server: "evil", Stage: "tools/list", Err: errors.New("server said \x1b[31mno\nsecond line")}})
	p.Close()
	p.probe("late", false, nil) // after Close: nothing
	want := `github: probing...
memory: probing...
github: started
github: handshake...
memory: started
github: listing...
github: done in 1.2s: 12 tools, 1 prompt, 2 resource templates
memory: failed after 27s: did not start
evil\u202e: probing...
evil\u202e: failed after 5ms: tools/list: server said \u001b[31mno
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestProgressHeartbeat: without a terminal, a phase that lasts gets a
// line after 10s, 30s, 60s and then every minute, one line however many
// were missed; a new phase starts the count again.
func TestProgressHeartbeat(t *testing.T) {
	var out bytes.Buffer
	clk := newClock()
	p := newProgress(&out, false, 0, 2, clk.now)
	p.probe("filesystem", false, nil)
	p.phase("filesystem", mcp.PhaseStarting)
	p.phase("filesystem", mcp.PhaseHandshake)
	p.probe("quick", false, nil)
	mark := out.Len()
	var beats []string
	at := func(d time.Duration) {
		clk.set(d)
		p.tick()
		beats = append(beats, d.String()+" "+strings.TrimSuffix(out.String()[mark:], "\n"))
		mark = out.Len()
	}
	at(9 * time.Second)
	at(10 * time.Second)
	at(11 * time.Second)
	at(30 * time.Second)
	at(60 * time.Second)
	at(119 * time.Second)
	at(120 * time.Second)
	at(400 * time.Second) // a stalled machine: one line, then the next minute
	at(420 * time.Second)
	at(421 * time.Second)
	clk.set(430 * time.Second)
	p.phase("filesystem", mcp.PhaseListing)
	mark = out.Len()
	at(439 * time.Second)
	at(440 * time.Second)
	p.probe("filesystem", true, &plan.Result{Name: "filesystem", Entry: entry(0, 0, 0, 0), Duration: 440 * time.Second})
	p.probe("quick", true, &plan.Result{Name: "quick", Entry: entry(1, 0, 0, 0), Duration: 440 * time.Second})
	mark = out.Len()
	at(500 * time.Second) // nothing runs: no heartbeat
	p.Close()
	const hint = ": no answer to the handshake yet (the command may be compiling or downloading: go run, npx, uvx)"
	want := []string{
		"9s ",
		"10s filesystem: still starting after 10s" + hint + "\nquick: still starting after 10s",
		"11s ",
		"30s filesystem: still starting after 30s" + hint + "\nquick: still starting after 30s",
		"1m0s filesystem: still starting after 1m0s" + hint + "\nquick: still starting after 1m0s",
		"1m59s ",
		"2m0s filesystem: still starting after 2m0s" + hint + "\nquick: still starting after 2m0s",
		"6m40s filesystem: still starting after 6m40s" + hint + "\nquick: still starting after 6m40s",
		"7m0s filesystem: still starting after 7m0s" + hint + "\nquick: still starting after 7m0s",
		"7m1s ",
		"7m19s ",
		"7m20s filesystem: still listing after 10s",
		"8m20s ",
	}
	if diff := cmp.Diff(want, beats); diff != "" {
		t.Errorf("heartbeats by time (-want +got):\n%s", diff)
	}
}

// screen plays out as a terminal would (a carriage return goes back to
// the line's start, a character overwrites the one under the cursor) and
// returns the lines, trailing spaces dropped; the last is the line the
// cursor is on.
func screen(out string) []string {
	lines := [][]rune{nil}
	col := 0
	for _, r := range out {
		cur := &lines[len(lines)-1]
		switch r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, nil)
			col = 0
		default:
			if col < len(*cur) {
				(*cur)[col] = r
			} else {
				*cur = append(*cur, r)
			}
			col++
		}
	}
	var s []string
	for _, l := range lines {
		s = append(s, strings.TrimRight(string(l), " "))
	}
	return s
}

// TestProgressStatusLine: on a terminal, one status line of counts is
// rewritten in place, with the server running longest, its phase and its
// seconds; the ends are permanent lines above it; Close leaves only them.
// No escape sequence is written.
func TestProgressStatusLine(t *testing.T) {
	var out bytes.Buffer
	clk := newClock()
	p := newProgress(&out, true, 200, 0, clk.now)
	status := func() string { s := screen(out.String()); return s[len(s)-1] }
	var got []string
	note := func() { got = append(got, status()) }

	p.expect(5)
	note()
	p.probe("github", false, nil)
	p.phase("github", mcp.PhaseStarting)
	clk.set(time.Second)
	p.probe("memory", false, nil)
	p.probe("time", false, nil)
	p.phase("github", mcp.PhaseListing)
	note()
	clk.set(12 * time.Second)
	p.tick()
	note()
	p.probe("github", true, &plan.Result{Name: "github", Entry: entry(3, 0, 0, 0), Duration: 12 * time.Second})
	note()
	p.probe("memory", true, &plan.Result{Name: "memory", Err: startErr(), Duration: 11 * time.Second})
	p.probe("filesystem", false, nil)
	p.phase("time", mcp.PhaseHandshake)
	note()
	clk.set(14 * time.Second)
	p.probe("time", true, &plan.Result{Name: "time", Entry: entry(1, 0, 0, 0), Duration: 13 * time.Second})
	note()
	p.Close()

	want := []string{
		"Probing 5 servers: 0 done, 0 failed, 0 in progress, 5 waiting",
		"Probing 5 servers: 0 done, 0 failed, 3 in progress, 2 waiting (github: listing, 1s)",
		"Probing 5 servers: 0 done, 0 failed, 3 in progress, 2 waiting (github: listing, 12s)",
		"Probing 5 servers: 1 done, 0 failed, 2 in progress, 2 waiting (memory: starting, 11s; compiling or downloading?)",
		"Probing 5 servers: 1 done, 1 failed, 2 in progress, 1 waiting (time: handshake, 11s; compiling or downloading?)",
		"Probing 5 servers: 2 done, 1 failed, 1 in progress, 1 waiting (filesystem: starting, 2s)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status lines (-want +got):\n%s", diff)
	}
	wantScreen := []string{
		"github: done in 12s: 3 tools",
		"memory: failed after 11s: did not start",
		"time: done in 13s: 1 tool",
		"",
	}
	if diff := cmp.Diff(wantScreen, screen(out.String())); diff != "" {
		t.Errorf("screen after Close (-want +got):\n%s", diff)
	}
	if strings.ContainsRune(out.String(), '\x1b') {
		t.Errorf("output has an escape sequence: %q", out.String())
	}
	// No heartbeat lines on a terminal: the status line has the seconds.
	if strings.Contains(out.String(), "still") {
		t.Errorf("a heartbeat line on a terminal: %q", out.String())
	}
}

// TestProgressStatusLineFits: the status line stays a column short of the
// terminal's width, so that it never wraps (a carriage return would then
// go back to the wrong row). (TestProgressStatusLine shows a shorter line
// blanking a longer one's end.)
func TestProgressStatusLineFits(t *testing.T) {
	var out bytes.Buffer
	clk := newClock()
	p := newProgress(&out, true, 40, 2, clk.now)
	p.probe("a-server-with-a-long-name", false, nil)
	s := screen(out.String())
	if got, want := s[len(s)-1], "Probing 2 servers: 0 done, 0 failed, 1…"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	if n := len([]rune(s[len(s)-1])); n != 39 {
		t.Errorf("status has %d columns, want 39", n)
	}
	p.probe("a-server-with-a-long-name", true, &plan.Result{Entry: entry(0, 0, 0, 0)})
	p.Close()
	if diff := cmp.Diff([]string{"a-server-with-a-long-name: done in 0s: 0 tools", ""}, screen(out.String())); diff != "" {
		t.Errorf("screen after Close (-want +got):\n%s", diff)
	}
}

// TestProgressRun: the ticking loop ticks on each value it gets and ends
// with Close.
func TestProgressRun(t *testing.T) {
	var out bytes.Buffer
	clk := newClock()
	p := newProgress(&out, false, 0, 1, clk.now)
	ticks := make(chan time.Time)
	ended := make(chan struct{})
	go func() { p.run(ticks); close(ended) }()
	p.probe("slow", false, nil)
	clk.set(10 * time.Second)
	ticks <- time.Time{}
	ticks <- time.Time{} // received only once the first tick is done
	p.Close()
	<-ended
	want := "slow: probing...\nslow: still starting after 10s\n"
	if got := out.String(); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestFailReason(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		err  error
		want string
	}{
		{startErr(), "did not start"},
		{&mcp.StartError{Server: "x", Stage: "start", Err: errors.New("exec: not found")}, "did not start"},
		{&mcp.ProbeError{Server: "x", Stage: "tools/list", Err: errors.New("no answer to tools/list within 30s\nmore")}, "tools/list: no answer to tools/list within 30s"},
		{errors.New("plain failure\u200b"), `plain failure\u200b`},
		{errors.New(`already escaped: \u001b[31m`), `already escaped: \u001b[31m`},
		{errors.New(long), strings.Repeat("x", 159) + "…"},
	}
	for _, tt := range tests {
		if got := failReason(tt.err); got != tt.want {
			t.Errorf("failReason(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestSurfaceCounts(t *testing.T) {
	for _, tt := range []struct {
		e    *lock.Entry
		want string
	}{
		{entry(0, 0, 0, 0), "0 tools"},
		{entry(1, 0, 0, 0), "1 tool"},
		{entry(0, 2, 0, 0), "0 tools, 2 prompts"},
		{entry(3, 1, 1, 1), "3 tools, 1 prompt, 1 resource, 1 resource template"},
	} {
		if got := surfaceCounts(tt.e); got != tt.want {
			t.Errorf("surfaceCounts(%d tools…) = %q, want %q", len(tt.e.Tools), got, tt.want)
		}
	}
}
