package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
)

func withTools(t *testing.T, tools ...string) *lock.Entry {
	t.Helper()
	e := &lock.Entry{Command: []string{"srv"}, EnvPassthrough: []string{}, ProtocolVersion: "2025-11-25",
		ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`), Capabilities: json.RawMessage(`{"tools":{}}`)}
	for _, name := range tools {
		it, err := lock.NewItem(lock.Tools, json.RawMessage(`{"name":"`+name+`","inputSchema":{"type":"object"}}`))
		if err != nil {
			t.Fatal(err)
		}
		e.Tools = append(e.Tools, it)
	}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAddrOf(t *testing.T) {
	for name, want := range map[string]string{
		"time":         "server.time",
		"github.issue": "module.github.server.issue",
		"a.b.s":        "module.a.module.b.server.s",
	} {
		if got := ServerAddr(name); got != want {
			t.Errorf("ServerAddr(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestConfigChanges(t *testing.T) {
	old := withTools(t, "fetch")
	old.EnvPassthrough = []string{"TZ"}
	old.Policy = &policy.Policy{Taint: &policy.Taint{Sources: []string{"fetch"}}}
	live := withTools(t, "fetch")
	live.Command = []string{"srv", "--v2"}
	live.EnvPassthrough = []string{"TZ"}
	live.Mcpform = &lock.Settings{Version: "1.1.0", Protocol: "legacy"}
	live.Policy = &policy.Policy{Taint: &policy.Taint{Sources: []string{"fetch"}, Sinks: []string{"fetch"}}}
	var got []string
	for _, c := range configChanges("server.s", old, live) {
		if c.Class != Config || c.Grade != None || c.Action != Update {
			t.Errorf("%s: class %s grade %s action %s, want config/none/update", c.Addr, c.Class, c.Grade, c.Action)
		}
		got = append(got, c.Rule+" "+c.Addr+" "+string(c.Before)+" -> "+string(c.After))
	}
	want := []string{
		`CFG-COMMAND-CHANGED server.s.command ["srv"] -> ["srv","--v2"]`,
		`CFG-PROTOCOL-CHANGED server.s.protocol "auto" -> "legacy"`,
		`CFG-VERSION-CHANGED server.s.version "" -> "1.1.0"`,
		`CFG-POLICY-CHANGED server.s.policy {"taint":{"sources":["fetch"],"sinks":[]}} -> {"taint":{"sources":["fetch"],"sinks":["fetch"]}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configChanges (-want +got):\n%s", diff)
	}
}

// TestPlanServerLimits: a change of the sandbox's limits between mcp.hcl
// and the lock is a policy change (CFG-POLICY-CHANGED, config, grade none,
// as every sandbox change: the rules do not grade loosening apart), and the
// planned entry carries the limits apply writes.
func TestPlanServerLimits(t *testing.T) {
	sandbox := func(l *policy.Limits) *policy.Sandbox {
		return &policy.Sandbox{Filesystem: policy.Filesystem{Read: []string{"/srv"}, Write: []string{}}, Network: policy.Network{Allow: []string{}}, Limits: l}
	}
	server := func(l *policy.Limits) *lang.Server {
		return &lang.Server{Name: "s", Addr: "server.s", Command: []string{"srv"}, Protocol: "auto", Timeout: 30 * time.Second,
			Policy: policy.Policy{Sandbox: sandbox(l)}}
	}
	locked := func(l *policy.Limits) *lock.Entry {
		e := withTools(t, "fetch")
		e.Policy = &policy.Policy{Sandbox: sandbox(l)}
		return e
	}
	const fs = `{"sandbox":{"filesystem":{"read":["/srv"],"write":[]},"network":{"allow":[]}`
	for _, tt := range []struct {
		name         string
		locked, live *policy.Limits
		want         []string
	}{
		{"added", nil, &policy.Limits{Memory: 1 << 30, Processes: 64},
			[]string{`CFG-POLICY-CHANGED server.s.policy ` + fs + `}} -> ` + fs + `,"limits":{"memory":1073741824,"processes":64}}}`}},
		{"loosened", &policy.Limits{Memory: 1 << 30}, &policy.Limits{Memory: 8 << 30},
			[]string{`CFG-POLICY-CHANGED server.s.policy ` + fs + `,"limits":{"memory":1073741824}}} -> ` + fs + `,"limits":{"memory":8589934592}}}`}},
		{"tightened", &policy.Limits{Files: 4096}, &policy.Limits{Files: 1024, FileSize: 64 << 20},
			[]string{`CFG-POLICY-CHANGED server.s.policy ` + fs + `,"limits":{"files":4096}}} -> ` + fs + `,"limits":{"files":1024,"fileSize":67108864}}}`}},
		{"removed", &policy.Limits{Processes: 32}, nil,
			[]string{`CFG-POLICY-CHANGED server.s.policy ` + fs + `,"limits":{"processes":32}}} -> ` + fs + `}}`}},
		{"unchanged", &policy.Limits{Memory: 1 << 30}, &policy.Limits{Memory: 1 << 30}, nil},
		{"none", nil, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := &ServerPlan{Name: "s", Addr: "server.s"}
			planServer(sp, server(tt.live), nil, locked(tt.locked), withTools(t, "fetch"), nil, nil)
			var got []string
			for _, c := range sp.Changes {
				if c.Class != Config || c.Grade != None || c.Action != Update {
					t.Errorf("%s: class %s grade %s action %s, want config/none/update", c.Addr, c.Class, c.Grade, c.Action)
				}
				got = append(got, c.Rule+" "+c.Addr+" "+string(c.Before)+" -> "+string(c.After))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if sp.RequiredBump != None {
				t.Errorf("required bump %s, want none: limits are not the surface", sp.RequiredBump)
			}
			wantAction := Update
			if tt.want == nil {
				wantAction = NoOp
			}
			if sp.Action != wantAction {
				t.Errorf("action %q, want %q", sp.Action, wantAction)
			}
			if diff := cmp.Diff(tt.live, sp.Entry.Policy.Sandbox.Limits); diff != "" {
				t.Errorf("planned entry's limits (-want +got):\n%s", diff)
			}
		})
	}
	if r, ok := LookupRule("CFG-POLICY-CHANGED"); !ok || r.Grade != None || r.Class != Config {
		t.Errorf("CFG-POLICY-CHANGED = %+v, %v; want a config rule of grade none", r, ok)
	}
}

func TestPlanServerTaintAndBumpGate(t *testing.T) {
	old := withTools(t, "fetch", "send")
	old.Mcpform = &lock.Settings{Version: "1.0.0"}
	s := &lang.Server{Name: "s", Addr: "server.s", Command: []string{"srv"}, Protocol: "auto", Timeout: 30 * time.Second,
		Version: "1.0.1", Policy: policy.Policy{Taint: &policy.Taint{Sources: []string{"fetch"}, Sinks: []string{"send"}}}}

	// The server dropped "send": a removed tool is a major change, so a
	// patch bump is refused; the label for the vanished tool is dropped by
	// Finish with a note, not an error.
	sp := &ServerPlan{Name: "s", Addr: "server.s", Version: s.Version}
	planServer(sp, s, nil, old, withTools(t, "fetch"), nil, nil)
	if sp.Error != "" {
		t.Errorf("a label for a tool the lock has but the server dropped: error %q, want none", sp.Error)
	}
	if sp.RequiredBump != Major || !strings.Contains(sp.VersionError, "major") {
		t.Errorf("required %s, version error %q; want major and an under-bump error", sp.RequiredBump, sp.VersionError)
	}
	p := &Plan{Servers: []*ServerPlan{sp}}
	sp.VersionError = ""
	if err := Finish(p, &lock.File{Servers: map[string]*lock.Entry{"s": old}}, "test"); err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], `taint sink "send" dropped`) {
		t.Errorf("notes = %q, want the dropped sink named", p.Notes)
	}
	if got := sp.Entry.Policy.Taint.Sinks; len(got) != 0 {
		t.Errorf("sinks after Finish = %v, want none", got)
	}

	// A label that names no tool at all is a typo: an error.
	s.Policy.Taint.Sinks = []string{"sned"}
	sp = &ServerPlan{Name: "s", Addr: "server.s"}
	planServer(sp, s, nil, old, withTools(t, "fetch", "send"), nil, nil)
	if !strings.Contains(sp.Error, `taint sink "sned" is not a locked tool: the server lists no such tool; did you mean "send"? fix the taint block`) {
		t.Errorf("error = %q, want the misspelled sink named, with the tool meant", sp.Error)
	}
}

// TestPlanServerUnknownVersionedTool: a tool version block naming a tool
// the server does not have is an error with the tool meant, for a new
// server and a locked one; a far-off name gets no guess.
func TestPlanServerUnknownVersionedTool(t *testing.T) {
	for _, old := range []*lock.Entry{nil, withTools(t, "fetch", "send")} {
		s := &lang.Server{Name: "s", Addr: "server.s", Command: []string{"srv"}, Protocol: "auto", Timeout: 30 * time.Second,
			ToolVersions: map[string]string{"fecth": "1.0.0", "send": "1.0.0"}}
		sp := &ServerPlan{Name: "s", Addr: "server.s"}
		planServer(sp, s, nil, old, withTools(t, "fetch", "send"), nil, nil)
		want := `tool "fecth" has a declared version, but the server lists no such tool; did you mean "fetch"? fix the tool block in mcp.hcl`
		if sp.VersionError != want {
			t.Errorf("locked %v: version error %q, want %q", old != nil, sp.VersionError, want)
		}
		s.ToolVersions = map[string]string{"zzzzzz": "1.0.0"}
		sp = &ServerPlan{Name: "s", Addr: "server.s"}
		planServer(sp, s, nil, old, withTools(t, "fetch", "send"), nil, nil)
		if want := `tool "zzzzzz" has a declared version, but the server lists no such tool; fix the tool block in mcp.hcl`; sp.VersionError != want {
			t.Errorf("locked %v: version error %q, want %q", old != nil, sp.VersionError, want)
		}
	}
}

func TestFinishRefusesPlansWithErrors(t *testing.T) {
	p := &Plan{Servers: []*ServerPlan{{Name: "s", Addr: "server.s", Error: "probing failed"}}}
	if err := Finish(p, nil, "test"); err != nil {
		t.Fatal(err)
	}
	if p.PlannedLock != nil {
		t.Error("a plan with errors got a planned lock")
	}
}

// TestNotFoundHint: a server whose program is not on PATH fails its probe
// with a hint that says what to install, or to remove the server, or to plan
// the servers that were probed, as a command to paste.
func TestNotFoundHint(t *testing.T) {
	fetch := &lang.Server{Name: "fetch", Addr: "server.fetch", Command: []string{"uvx", "mcp-server-fetch==2025.4.7"}, Protocol: "auto"}
	got := notFoundHint(fetch, []string{"github.issues", "time"})
	want := "\nhint: \"uvx\" is not installed where mcpform runs (it is not on mcpform's PATH). To fix it, install uv, which provides uvx (https://docs.astral.sh/uv/getting-started/installation/); " +
		"or remove the server \"fetch\" block from mcp.hcl; or plan the servers that were probed without it:\n    mcpform plan -target github.issues -target time"
	if got != want {
		t.Errorf("notFoundHint:\n%s\nwant:\n%s", got, want)
	}
	if got := notFoundHint(fetch, nil); strings.Contains(got, "-target") || !strings.HasSuffix(got, "block from mcp.hcl.") {
		t.Errorf("with no server probed, no -target command: %s", got)
	}

	// Through Make: the probe's error carries the hint. (Not through uvx,
	// which a plan no longer runs: a PyPI runner's server is probed from
	// its pinned tree, plan/pypi.go.)
	t.Setenv("PATH", t.TempDir())
	fetch = &lang.Server{Name: "fetch", Addr: "server.fetch", Command: []string{"mcp-server-fetch"}, Protocol: "auto"}
	cfg := &lang.Config{Dir: t.TempDir(), Lockfile: "mcp.lock", Servers: []*lang.Server{fetch}}
	p, err := Make(t.Context(), cfg, nil, nil, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Servers) != 1 || !strings.Contains(p.Servers[0].Error, `executable file not found`) || !strings.Contains(p.Servers[0].Error, "\nhint: \"mcp-server-fetch\" is not installed where mcpform runs") {
		t.Errorf("plan error lacks the hint: %+v", p.Servers[0])
	}
}
