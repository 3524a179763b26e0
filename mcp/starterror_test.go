package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProbeStartFailure: a server that cannot be run, exits before it
// answers the handshake or does not answer it in time gives a *StartError
// (inside the *ProbeError) that says it did not start, names the
// environment it got and the listed names that were unset, hints at PATH,
// and shows its stderr tail escaped. A server that answers, even wrongly,
// is not a start failure.
func TestProbeStartFailure(t *testing.T) {
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Skip("no /usr/bin/env")
	}
	// A "#!/usr/bin/env fakenode" script, fakenode being found only
	// through PATH, as node is under nvm or Homebrew (env falls back to
	// /bin:/usr/bin without PATH, where sh would still be found).
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(bin, "fakenode")); err != nil {
		t.Fatal(err)
	}
	envScript := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(envScript, []byte("#!/usr/bin/env fakenode\necho never here\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unsetLookup := func(set ...string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			for _, s := range set {
				if s == name {
					return "value-" + name, true
				}
			}
			return "", false
		}
	}
	tests := []struct {
		name   string
		spec   func() ServerSpec
		exited bool
		stage  string
		env    []string
		unset  []string
		want   []string
	}{{
		name: "exits at once with stderr",
		spec: func() ServerSpec {
			return ServerSpec{Name: "quick", Command: []string{"/bin/sh", "-c", "echo 'fatal: no config\x1b[31m' >&2; exit 7"},
				Env: []string{"HOME", "TOKEN"}, LookupEnv: unsetLookup("HOME")}
		},
		exited: true, stage: "initialize", env: []string{"HOME"}, unset: []string{"TOKEN"},
		want: []string{"the server did not start: it exited before it answered initialize", "(exit status 7)",
			"environment it got (names only): HOME\n", "not set in mcpform's environment, so not passed: TOKEN",
			`hint: PATH is not passed: add "PATH" to env`, `| fatal: no config\u001b[31m`},
	}, {
		name: "a #!/usr/bin/env script without PATH",
		spec: func() ServerSpec {
			return ServerSpec{Name: "script", Command: []string{envScript}, LookupEnv: unsetLookup("PATH")}
		},
		exited: true, stage: "initialize",
		want: []string{"it exited before it answered initialize", "(exit status 127)", "environment it got (names only): none",
			`hint: PATH is not passed: add "PATH" to env`, "fakenode"},
	}, {
		name: "PATH listed but unset where mcpform runs",
		spec: func() ServerSpec {
			return ServerSpec{Name: "script", Command: []string{envScript}, Env: []string{"PATH"}, LookupEnv: unsetLookup()}
		},
		exited: true, stage: "initialize", unset: []string{"PATH"},
		want: []string{"environment it got (names only): none", "so not passed: PATH",
			"hint: PATH is listed in env but not set where mcpform runs", "set PATH in the client's configuration for mcpform"},
	}, {
		name: "never answers initialize",
		spec: func() ServerSpec {
			s := fake(t, `{"stderr":"fake: waiting for the registry\n","tools":[],"on":{"initialize":{"do":"silent"}}}`)
			s.Era, s.Timeout = EraLegacy, 700*time.Millisecond
			return s
		},
		stage: "initialize", env: []string{"MCPFORM_FAKEMCP"},
		want: []string{"the server did not start: it did not answer initialize in time", "probe timeout of 700ms",
			"environment it got (names only): MCPFORM_FAKEMCP", "| fake: waiting for the registry"},
	}, {
		name: "cannot be run",
		spec: func() ServerSpec {
			return ServerSpec{Name: "nope", Command: []string{"/nonexistent/server"}, Env: []string{"PATH"}, LookupEnv: unsetLookup("PATH")}
		},
		stage: "start", env: []string{"PATH"},
		want: []string{`probing server "nope": start: the server did not start: it could not be run: starting "/nonexistent/server"`,
			"environment it got (names only): PATH", "(nothing on stderr)"},
	}}
	// The control: with PATH, the same script starts (and prints its
	// non-JSON line, which is a probe error but not a start failure).
	t.Run("the script with PATH starts", func(t *testing.T) {
		_, err := Probe(context.Background(), ServerSpec{Name: "script", Command: []string{envScript}, Env: []string{"PATH"},
			LookupEnv: func(string) (string, bool) { return bin, true }, ShutdownGrace: 300 * time.Millisecond})
		var se *StartError
		if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "never here") {
			t.Errorf("err = %v, want the script's output as a protocol error", err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := tt.spec()
			spec.ShutdownGrace = 300 * time.Millisecond
			_, err := Probe(context.Background(), spec)
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want a *StartError", err, err)
			}
			var pe *ProbeError
			if !errors.As(err, &pe) || pe.Stage != tt.stage || se.Stage != tt.stage {
				t.Errorf("stage: probe %v, start error %q; want %q", pe, se.Stage, tt.stage)
			}
			if se.Exited != tt.exited {
				t.Errorf("Exited = %v, want %v", se.Exited, tt.exited)
			}
			if d := cmp.Diff(tt.env, se.Env); d != "" {
				t.Errorf("Env (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.unset, se.Unset); d != "" {
				t.Errorf("Unset (-want +got):\n%s", d)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "value-") {
				t.Errorf("error shows an environment value:\n%s", msg)
			}
			if strings.ContainsAny(msg, "\x1b") {
				t.Errorf("error holds raw control characters: %q", msg)
			}
		})
	}
}

// Servers that answer the handshake, even with an error or garbage, did
// start: their failures are not start failures.
func TestProbeAnsweredIsNotStartFailure(t *testing.T) {
	for _, spec := range []string{
		`{"tools":[],"on":{"initialize":{"do":"error","code":-32602,"message":"unsupported"}}}`,
		`{"tools":[],"on":{"initialize":{"do":"garbage"}}}`,
		`{"tools":[],"on":{"tools/list":{"do":"exit"}}}`,
	} {
		s := fake(t, spec)
		s.Era, s.Timeout, s.ShutdownGrace = EraLegacy, 5*time.Second, 300*time.Millisecond
		_, err := Probe(context.Background(), s)
		var se *StartError
		if err == nil || errors.As(err, &se) {
			t.Errorf("%s: err = %v, want a probe error that is not a start failure", spec, err)
		}
	}
}

// StartError's stderr tail is bounded in lines and bytes.
func TestStartErrorStderrBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString(strings.Repeat("x", 100) + "\n")
	}
	se := &StartError{Server: "s", Stage: "initialize", Err: context.DeadlineExceeded, Stderr: b.String()}
	msg := se.Error()
	if n := strings.Count(msg, "\n  | "); n > stderrLines {
		t.Errorf("%d stderr lines shown, want at most %d", n, stderrLines)
	}
	if len(msg) > stderrBytes+1000 {
		t.Errorf("message is %d bytes", len(msg))
	}
}

// Hint names what a server needs and did not get: PATH always, HOME too
// for a launcher such as npx or uvx; a name listed but unset is told apart
// from one not listed.
func TestStartErrorHint(t *testing.T) {
	tests := []struct {
		command    []string
		env, unset []string
		want       string
	}{
		{[]string{"/usr/local/bin/server"}, []string{"PATH"}, nil, ""},
		{[]string{"/usr/local/bin/server"}, nil, nil, `PATH is not passed: add "PATH" to env`},
		{[]string{"npx", "-y", "pkg"}, []string{"PATH", "HOME"}, nil, ""},
		{[]string{"npx", "-y", "pkg"}, nil, nil, `PATH and HOME are not passed: add "PATH" and "HOME" to env`},
		{[]string{"/opt/bin/uvx", "pkg"}, []string{"PATH"}, []string{"HOME"}, "HOME is listed in env but not set where mcpform runs"},
		{[]string{"uvx", "pkg"}, nil, []string{"PATH", "HOME"}, "PATH and HOME are listed in env but not set where mcpform runs"},
	}
	for _, tt := range tests {
		got := (&StartError{Command: tt.command, Env: tt.env, Unset: tt.unset}).Hint()
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%v env %v unset %v: hint %q, want %q", tt.command, tt.env, tt.unset, got, tt.want)
		}
	}
	// A program mcpform itself found nowhere on its PATH never ran: the
	// variables it would have got are beside the point.
	notFound := &StartError{Command: []string{"no-such-server"}, Err: fmt.Errorf(`starting "no-such-server": %w`, exec.ErrNotFound)}
	if got := notFound.Hint(); got != "" {
		t.Errorf("hint for a program not found: %q, want none", got)
	}
}
