package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its terminal side, the one a
// program's stdout or stderr would be on a person's screen; it skips the
// test where there is none.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	// Drain what the tests write, so that a full buffer never blocks them.
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	return pts
}

// TestIsTerminal: a terminal is what answers as one, not any character
// device. /dev/null is a character device, and `plan >/dev/null` must not
// make mcpform think a person is watching.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if st, _ := null.Stat(); st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is not a character device here", os.DevNull)
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "err.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, stream := range map[string]any{"/dev/null": null, "a file": file, "a pipe": w, "a buffer": &strings.Builder{}} {
		if isTerminal(stream) {
			t.Errorf("isTerminal(%s) = true", name)
		}
	}
	if pts := openPTY(t); !isTerminal(pts) {
		t.Errorf("isTerminal(a pseudo-terminal) = false")
	}
}

// TestUseColor: colour only on a terminal, decided for the stream written,
// and never with -no-color, NO_COLOR or TERM=dumb.
func TestUseColor(t *testing.T) {
	pts := openPTY(t)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		name    string
		w       any
		getenv  func(string) string
		noColor bool
		want    bool
	}{
		{"a terminal", pts, env("TERM", "xterm-256color"), false, true},
		{"/dev/null", null, env("TERM", "xterm-256color"), false, false},
		{"-no-color", pts, env(), true, false},
		{"NO_COLOR", pts, env("NO_COLOR", "1"), false, false},
		{"NO_COLOR empty is unset", pts, env("NO_COLOR", ""), false, true},
		{"TERM=dumb", pts, env("TERM", "dumb"), false, false},
	} {
		io := &stdio{out: null, err: null, getenv: tt.getenv}
		if got := useColor(io, tt.w.(*os.File), tt.noColor); got != tt.want {
			t.Errorf("%s: useColor = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestColorFollowsTheStream is issue 15's `mcpform plan -target fetch
// >/dev/null 2>err.log`: the plan goes to stdout and its closing Error:
// line to stderr, and only stderr's being a terminal may colour that line.
// With stdout on a terminal or on /dev/null (a character device) and
// stderr in a file, the file gets no escape code.
func TestColorFollowsTheStream(t *testing.T) {
	pts := openPTY(t)
	dir := t.TempDir()
	hcl := "server \"fetch\" {\n  command = [\"" + filepath.Join(dir, "no-such-server") + "\"]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, out := range map[string]*os.File{"stdout on a terminal": pts, "stdout on /dev/null": null} {
		log, err := os.Create(filepath.Join(t.TempDir(), "err.log"))
		if err != nil {
			t.Fatal(err)
		}
		io := &stdio{in: strings.NewReader(""), out: out, err: log, getenv: func(k string) string {
			if k == "TERM" {
				return "xterm"
			}
			return ""
		}}
		if code := run(context.Background(), []string{"plan", "-target", "fetch"}, io); code != exitError {
			t.Errorf("%s: plan exited %d, want %d", name, code, exitError)
		}
		log.Close()
		data, err := os.ReadFile(log.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "Error:") {
			t.Errorf("%s: no Error: on stderr:\n%s", name, data)
		}
		if strings.Contains(string(data), "\x1b[") {
			t.Errorf("%s: an escape code in the redirected stderr: %q", name, data)
		}
	}
}
