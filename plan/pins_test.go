package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
)

var (
	sumA = strings.Repeat("a", 64)
	sumB = strings.Repeat("b", 64)
)

// TestPinChanges: each pinned file that is another is a change of its own
// class (code), graded, never a surface bump; a file that only moved is
// none.
func TestPinChanges(t *testing.T) {
	pin := func(path, sum string) *lock.FilePin { return &lock.FilePin{Path: path, SHA256: sum} }
	for _, tt := range []struct {
		name      string
		old, live *lock.Pins
		want      []string // rule address action grade
	}{
		{"unchanged", &lock.Pins{Executable: pin("/bin/x", sumA)}, &lock.Pins{Executable: pin("/bin/x", sumA)}, nil},
		{"moved", &lock.Pins{Executable: pin("/bin/x", sumA)}, &lock.Pins{Executable: pin("/usr/bin/x", sumA)}, nil},
		{"executable changed", &lock.Pins{Executable: pin("/bin/x", sumA)}, &lock.Pins{Executable: pin("/bin/x", sumB)},
			[]string{"PKG-EXECUTABLE-CHANGED server.s.pins.executable update major"}},
		{"a lock from before pins", nil, &lock.Pins{Executable: pin("/bin/node", sumA), Script: pin("index.js", sumB)},
			[]string{"PKG-EXECUTABLE-ADDED server.s.pins.executable create none", "PKG-SCRIPT-ADDED server.s.pins.script create none"}},
		{"script changed", &lock.Pins{Executable: pin("/bin/node", sumA), Script: pin("index.js", sumA)},
			&lock.Pins{Executable: pin("/bin/node", sumA), Script: pin("index.js", sumB)},
			[]string{"PKG-SCRIPT-CHANGED server.s.pins.script update major"}},
		{"script gone", &lock.Pins{Executable: pin("/bin/node", sumA), Script: pin("index.js", sumA)},
			&lock.Pins{Executable: pin("/bin/node", sumA)},
			[]string{"PKG-SCRIPT-REMOVED server.s.pins.script delete none"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range pinChanges("server.s", tt.old, keepMoved(tt.live, tt.old)) {
				seenRules[c.Rule] = true
				if c.Class != Code {
					t.Errorf("%s: class %s, want code", c.Rule, c.Class)
				}
				if c.Security != (c.Grade == Major) {
					t.Errorf("%s: security %v", c.Rule, c.Security)
				}
				got = append(got, strings.Join([]string{c.Rule, c.Addr, c.Action.String(), c.Grade.String()}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// A file that moved keeps its locked record, so the lock is not
	// rewritten for it.
	old := &lock.Pins{Executable: pin("/bin/x", sumA)}
	if got := keepMoved(&lock.Pins{Executable: pin("/usr/bin/x", sumA)}, old); got.Executable.Path != "/bin/x" {
		t.Errorf("keepMoved kept %q, want the locked /bin/x", got.Executable.Path)
	}
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// TestMakePins: plan pins the files a real command starts (the test binary
// as the fake server, behind a symlink called node, and the "script" it is
// given, its surface file) before probing it, and a later plan after the
// script changed behind the same surface shows PKG-SCRIPT-CHANGED and no
// surface change.
func TestMakePins(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "node")); err != nil {
		t.Skip("no symlinks here")
	}
	script := filepath.Join(dir, "server.js")
	surface := `{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}`
	if err := os.WriteFile(script, []byte(surface), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &lang.Config{Dir: dir, Lockfile: filepath.Join(dir, "mcp.lock"), Servers: []*lang.Server{{
		Name: "s", Addr: "server.s", Command: []string{"./node", "server.js"}, Env: []string{"MCPFORM_FAKEMCP"}, Protocol: "auto"}}}
	opts := Options{LookupEnv: func(n string) (string, bool) { return "1", n == "MCPFORM_FAKEMCP" }}
	p, err := Make(t.Context(), cfg, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Servers[0]
	if sp.Error != "" {
		t.Fatalf("plan error: %s", sp.Error)
	}
	pins := sp.Entry.Mcpform.Pins
	if pins == nil || pins.Executable.Path != exe || pins.Executable.SHA256 != fileSum(t, exe) ||
		pins.Script == nil || pins.Script.Path != "server.js" || pins.Script.SHA256 != fileSum(t, script) {
		t.Fatalf("pins = %+v / %+v; want %s and server.js by their digests", pins.Executable, pins.Script, exe)
	}
	var rules []string
	for _, c := range sp.Changes {
		rules = append(rules, c.Rule)
	}
	if got := strings.Join(rules, " "); strings.Contains(got, "PKG-") {
		t.Errorf("a new server's plan shows %s: its pins are part of the new entry, not changes of their own", got)
	}

	// The same surface from another script file.
	locked := &lock.File{Servers: map[string]*lock.Entry{"s": sp.Entry}}
	if err := os.WriteFile(script, []byte(surface+"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = Make(t.Context(), cfg, locked, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	sp = p.Servers[0]
	if len(sp.Changes) != 1 || sp.Changes[0].Rule != "PKG-SCRIPT-CHANGED" || sp.RequiredBump != None || sp.Action != Update {
		t.Errorf("after the script changed: action %v, bump %v, changes %+v; want one PKG-SCRIPT-CHANGED, no bump", sp.Action, sp.RequiredBump, sp.Changes)
	}
}

// TestExactNPMVersion: a server run through an npm runner without an exact
// version is a plan error that says the exact form to write, and it is not
// started (npx is not even on PATH here).
func TestExactNPMVersion(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tt := range []struct {
		cmd  []string
		want string // "" for no version error
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@latest"}, `npx package "@modelcontextprotocol/server-memory@latest" has no exact version`},
		{[]string{"npx", "-y", "pkg@^1.2"}, `command = ["npx", "-y", "pkg@VERSION"]`},
		{[]string{"npx", "pkg"}, `command = ["npx", "-y", "pkg@VERSION"]`},
		{[]string{"npm", "exec", "--yes", "pkg@next"}, `npm exec package "pkg@next" has no exact version`},
		{[]string{"pnpm", "dlx", "pkg@1"}, `pnpm dlx package "pkg@1"`},
		{[]string{"bunx", "pkg@~1.2.3"}, "`npm view pkg version` shows the latest"},
		{[]string{"npx", "-y", "pkg@1.2.3"}, ""},
		{[]string{"uvx", "mcp-server-time"}, `command = ["uvx", "mcp-server-time==VERSION"]`}, // PyPI: refused too (plan/pypi.go)
		{[]string{"uvx", "mcp-server-time>=1"}, `uvx mcp-server-time>=1 has no exact version`},
	} {
		cfg := &lang.Config{Dir: t.TempDir(), Lockfile: "mcp.lock", Servers: []*lang.Server{{Name: "s", Addr: "server.s", Command: tt.cmd, Protocol: "auto"}}}
		p, err := Make(t.Context(), cfg, nil, nil, Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		got := p.Servers[0].Error
		if tt.want == "" {
			if strings.Contains(got, "exact version") {
				t.Errorf("%q: %s", tt.cmd, got)
			}
			continue
		}
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "exact version") || strings.Contains(got, "not found") {
			t.Errorf("%q: error %q, want it to say %q", tt.cmd, got, tt.want)
		}
	}
}
