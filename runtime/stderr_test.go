package runtime

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// What a server causes on mcpform's stderr is limited to a burst, then a
// rate, with a note of what was held back; mcpform's own lines always pass.
func TestStderrLimit(t *testing.T) {
	var l stderrLimit
	var w bytes.Buffer
	start := time.Unix(1e9, 0)
	for i := 0; i < 100_000; i++ {
		l.write(&w, "flood\n", true, start)
	}
	if got := strings.Count(w.String(), "flood\n"); got != stderrBurst {
		t.Fatalf("%d flood lines written at once; want the burst, %d", got, stderrBurst)
	}
	l.write(&w, "mcpform's own\n", false, start)
	note := "mcpform run: 99800 lines caused by the server were not shown (at most 20 a second are)\n"
	if !strings.HasSuffix(w.String(), note+"mcpform's own\n") {
		t.Fatalf("mcpform's own line did not pass with the note before it:\n%s", w.String()[max(0, w.Len()-300):])
	}
	w.Reset()
	for i := 0; i < 100; i++ { // one second later: stderrRate more
		l.write(&w, "flood\n", true, start.Add(time.Second))
	}
	if got := strings.Count(w.String(), "flood\n"); got != stderrRate {
		t.Errorf("%d flood lines a second later; want %d", got, stderrRate)
	}
	w.Reset()
	l.write(&w, "later\n", true, start.Add(time.Hour))
	if want := "mcpform run: 80 lines caused by the server were not shown (at most 20 a second are)\nlater\n"; w.String() != want {
		t.Errorf("after an hour: %q; want %q", w.String(), want)
	}
}
