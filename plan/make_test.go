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
		if got := addrOf(name); got != want {
			t.Errorf("addrOf(%q) = %q, want %q", name, got, want)
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

func TestPlanServerTaintAndBumpGate(t *testing.T) {
	old := withTools(t, "fetch", "send")
	old.Mcpform = &lock.Settings{Version: "1.0.0"}
	s := &lang.Server{Name: "s", Addr: "server.s", Command: []string{"srv"}, Protocol: "auto", Timeout: 30 * time.Second,
		Version: "1.0.1", Policy: policy.Policy{Taint: &policy.Taint{Sources: []string{"fetch"}, Sinks: []string{"send"}}}}

	// The server dropped "send": a removed tool is a major change, so a
	// patch bump is refused; the label for the vanished tool is dropped by
	// Finish with a note, not an error.
	sp := &ServerPlan{Name: "s", Addr: "server.s", Version: s.Version}
	planServer(sp, s, old, withTools(t, "fetch"))
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
	planServer(sp, s, old, withTools(t, "fetch", "send"))
	if !strings.Contains(sp.Error, `taint sink "sned" is not a locked tool`) {
		t.Errorf("error = %q, want the misspelled sink named", sp.Error)
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
