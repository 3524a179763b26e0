package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins"
)

// TestPinsRefuseStart: a server whose pinned script was rewritten after it
// was locked is not started: the client and stderr are told which file
// changed and to run mcpform plan, the audit log records the refusal, and
// the rewritten script never ran (its marker file is absent). The control
// run, with the pins of the script as it is, starts it.
func TestPinsRefuseStart(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "server.sh")
	write := func(version string) {
		t.Helper()
		if err := os.WriteFile(script, []byte("#!/bin/sh\n# "+version+"\n: > '"+marker+"'\nexit 3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	argv := []string{sh, "server.sh"}
	locked, err := pins.Compute(argv, dir, dir)
	if err != nil || locked.Script == nil {
		t.Fatalf("Compute = %+v, %v; want the script pinned", locked, err)
	}

	session := func() (*session, error) {
		cfg := []byte(`{"era": "legacy", ` + echoTools + `}`)
		var fc fakeConfig
		if err := json.Unmarshal(cfg, &fc); err != nil {
			t.Fatal(err)
		}
		e := lockFor(t, &fc, "unused")
		e.Command, e.EnvPassthrough = argv, []string{}
		e.Mcpform = &lock.Settings{Pins: locked}
		s := startSession(t, cfg, Options{Entry: e, Dir: dir, PinCache: pins.NewCache(filepath.Join(dir, "state"))})
		s.send(initLine)
		s.await("1")
		return s, s.finish()
	}

	// Control: the locked script runs (and exits, which is its start
	// failure, after it ran).
	s, runErr := session()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the locked script did not run (%v); run ended with %v\n%s", err, runErr, s.stderr.String())
	}
	os.Remove(marker)

	// The same tools, another script.
	write("v2")
	s, runErr = session()
	var sf *StartFailedError
	if !errors.As(runErr, &sf) {
		t.Fatalf("run ended with %v, want a *StartFailedError", runErr)
	}
	var m *pins.Mismatch
	if !errors.As(sf.Err, &m) || m.What != "script" {
		t.Fatalf("the start failed with %v, want a script mismatch", sf.Err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the rewritten script ran")
	}
	for _, out := range []struct{ what, text string }{{"the client", strings.Join(s.got, "\n")}, {"stderr", s.stderr.String()}} {
		for _, w := range []string{"did not start", "the script changed since it was locked", "server.sh", locked.Script.SHA256[:12], "mcpform plan", "PKG-SCRIPT-CHANGED"} {
			if !strings.Contains(out.text, w) {
				t.Errorf("%s is not told %q:\n%s", out.what, w, out.text)
			}
		}
	}
	audit, _ := os.ReadFile(s.audit)
	if !strings.Contains(string(audit), `"event":"start-failed"`) || !strings.Contains(string(audit), `"outcome":"not run"`) || !strings.Contains(string(audit), "PKG-SCRIPT-CHANGED") {
		t.Errorf("the audit log does not record the refusal:\n%s", audit)
	}
}
