package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/mcp"
)

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// startFailSession runs the proxy on a lock entry for the echo server
// whose command and env names are replaced by argv and env.
func startFailSession(t *testing.T, argv, env []string, lookup func(string) (string, bool)) *session {
	t.Helper()
	cfg := []byte(`{"era": "legacy", ` + echoTools + `}`)
	var fc fakeConfig
	if err := json.Unmarshal(cfg, &fc); err != nil {
		t.Fatal(err)
	}
	e := lockFor(t, &fc, "unused")
	e.Command, e.EnvPassthrough = argv, env
	return startSession(t, cfg, Options{Entry: e, LookupEnv: lookup})
}

// startFailure checks what a run whose server did not start shows: each
// request gets CodeStartFailed (never CodeQuarantined) with want in its
// message, stderr says the same, the audit log has a start-failed record
// and no quarantine, and the run ends with a *StartFailedError.
func checkStartFailure(t *testing.T, s *session, want ...string) *mcp.StartError {
	t.Helper()
	s.send(initLine)
	s.await("1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	s.await("2")
	runErr := s.finish()
	var sf *StartFailedError
	if !errors.As(runErr, &sf) {
		t.Fatalf("run ended with %v (%T), want a *StartFailedError", runErr, runErr)
	}
	if len(s.got) != 2 {
		t.Fatalf("client got %d lines, want 2:\n%s", len(s.got), strings.Join(s.got, "\n"))
	}
	for _, l := range s.got {
		var m struct {
			Error *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Error == nil {
			t.Fatalf("client got %s, want an error", l)
		}
		if m.Error.Code != CodeStartFailed {
			t.Errorf("code %d, want %d: %s", m.Error.Code, CodeStartFailed, l)
		}
		for _, w := range append([]string{"did not start"}, want...) {
			if !strings.Contains(m.Error.Message, w) {
				t.Errorf("message lacks %q:\n%s", w, m.Error.Message)
			}
		}
		if strings.Contains(m.Error.Message, "quarantine") || strings.Contains(m.Error.Message, "mcpform plan") {
			t.Errorf("a start failure is told as drift:\n%s", m.Error.Message)
		}
		if strings.ContainsAny(m.Error.Message, "\x1b\x07") {
			t.Errorf("message holds raw control characters: %q", m.Error.Message)
		}
	}
	stderr := s.stderr.String()
	for _, w := range append([]string{"did not start"}, want...) {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "quarantine") || strings.ContainsAny(stderr, "\x1b\x07") {
		t.Errorf("stderr:\n%q", stderr)
	}
	audit, _ := os.ReadFile(s.audit)
	if !strings.Contains(string(audit), `"event":"start-failed"`) || strings.Contains(string(audit), `"event":"quarantine"`) {
		t.Errorf("audit log:\n%s", audit)
	}
	if strings.Contains(string(audit), "value-") {
		t.Errorf("the audit log holds an environment value:\n%s", audit)
	}
	return sf.Err
}

// A server that exits at once, before it reads anything, did not start:
// its exit status and stderr, escaped, are what the client is told.
func TestStartFailureExitsAtOnce(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == "HOME" {
			return "value-home", true
		}
		return "", false
	}
	s := startFailSession(t, []string{"/bin/sh", "-c", `printf 'Error: Cannot find module\033[2J\n' >&2; exit 3`}, []string{"HOME", "GITHUB_TOKEN"}, lookup)
	se := checkStartFailure(t, s, "exited before it answered", "exit status 3", `| Error: Cannot find module\u001b[2J`,
		"environment it got (names only): HOME", "not set in mcpform's environment, so not passed: GITHUB_TOKEN", `PATH is not passed: add "PATH" to env`)
	if d := cmp.Diff([]string{"HOME"}, se.Env); d != "" {
		t.Errorf("Env (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"GITHUB_TOKEN"}, se.Unset); d != "" {
		t.Errorf("Unset (-want +got):\n%s", d)
	}
}

// A "#!/usr/bin/env fakenode" server needs PATH to find its interpreter:
// without it, the client is told PATH was not passed; with PATH listed but
// unset where mcpform runs (a client that strips mcpform's environment),
// it is told that. With PATH, the same server starts (the control).
func TestStartFailureNeedsPath(t *testing.T) {
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Skip("no /usr/bin/env")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// fakenode, found only through PATH, runs the echo server.
	if err := os.Symlink("/bin/sh", filepath.Join(bin, "fakenode")); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "upstream.json")
	writeUpstream(t, []byte(`{"era": "legacy", `+echoTools+`}`), cfgPath, "")
	script := filepath.Join(dir, "server")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env fakenode\nexec "+exe+" "+cfgPath+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withPath := func(name string) (string, bool) {
		switch name {
		case "PATH":
			return bin, true
		case "MCPFORM_RUNTIME_FAKE":
			return "1", true
		}
		return "", false
	}
	noPath := func(name string) (string, bool) {
		if name == "PATH" {
			return "", false
		}
		return withPath(name)
	}
	t.Run("not listed", func(t *testing.T) {
		s := startFailSession(t, []string{script}, []string{"MCPFORM_RUNTIME_FAKE"}, withPath)
		checkStartFailure(t, s, "exited before it answered", "exit status 127", "fakenode",
			"environment it got (names only): MCPFORM_RUNTIME_FAKE", `hint: PATH is not passed: add "PATH" to env`)
	})
	t.Run("listed but unset", func(t *testing.T) {
		s := startFailSession(t, []string{script}, []string{"PATH", "MCPFORM_RUNTIME_FAKE"}, noPath)
		checkStartFailure(t, s, "exit status 127", "so not passed: PATH",
			"hint: PATH is listed in env but not set where mcpform runs", "set PATH in the client's configuration for mcpform")
	})
	t.Run("control: with PATH it starts", func(t *testing.T) {
		s := startFailSession(t, []string{script}, []string{"PATH", "MCPFORM_RUNTIME_FAKE"}, withPath)
		s.send(initLine)
		s.await("1")
		if err := s.finish(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.got[0], `"result"`) {
			t.Errorf("initialize: %s", s.got[0])
		}
	})
}

// A server that cannot be run at all (no such command) gets the same
// treatment: the client is answered, not left with a closed stream.
func TestStartFailureCannotRun(t *testing.T) {
	s := startFailSession(t, []string{"/nonexistent/server"}, []string{"PATH"}, fakeEnv)
	se := checkStartFailure(t, s, "could not be run", "/nonexistent/server", "(nothing on stderr)", "so not passed: PATH")
	if se.Stage != "start" {
		t.Errorf("stage %q", se.Stage)
	}
}

// A client that leaves while the server is still starting ends the run as
// ever: stopping the server is no start failure.
func TestClientLeavesDuringStart(t *testing.T) {
	cfg := `{"era": "legacy", "on": {"initialize": {"do": "silent"}}, ` + echoTools + `}`
	s := startSession(t, []byte(cfg), Options{})
	s.settle(200 * time.Millisecond)
	if err := s.finish(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if strings.Contains(s.stderr.String(), "did not start") {
		t.Errorf("stderr:\n%s", s.stderr.String())
	}
	audit, _ := os.ReadFile(s.audit)
	if strings.Contains(string(audit), "start-failed") {
		t.Errorf("audit:\n%s", audit)
	}
}
