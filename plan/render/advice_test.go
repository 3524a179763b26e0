package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/plan"
)

// TestVersionAdvice: a server whose surface needs a bump shows the
// semver advice in every output, and one whose gate failed shows the
// failure instead (it names the version to declare already).
func TestVersionAdvice(t *testing.T) {
	locked := entry(t, "", getTime)
	live := entry(t, "", getTime, list)
	sp := serverPlan("time", locked, live)
	if sp.RequiredBump != plan.Minor {
		t.Fatalf("adding a tool needs a minor bump, got %v", sp.RequiredBump)
	}
	sp.LockedVersion, sp.Version = "1.4.0", "1.5.0"
	sp.SuggestedVersion = plan.SuggestVersion(sp.LockedVersion, sp.RequiredBump)
	p := &plan.Plan{FormatVersion: plan.FormatVersion, LockPath: "mcp.lock", Servers: []*plan.ServerPlan{sp}, RequiredBump: sp.RequiredBump}

	want := map[string]string{
		"human":    "  # version: locked 1.4.0, declared 1.5.0, required bump minor: suggested 1.5.0\n",
		"markdown": "# version: locked 1.4.0, declared 1.5.0, required bump minor: suggested 1.5.0\n",
		"json":     `"suggested_version": "1.5.0"`,
	}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"human":    func(b *bytes.Buffer) error { return Human(b, p, Options{}) },
		"markdown": func(b *bytes.Buffer) error { return Markdown(b, p) },
		"json":     func(b *bytes.Buffer) error { return JSON(b, p) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want[name]) {
			t.Errorf("%s output has no advice %q:\n%s", name, want[name], b.String())
		}
	}

	// A failed gate is shown as the failure, not as advice beside it.
	sp.Version = "1.4.1"
	sp.VersionError = plan.CheckVersionBump(sp.LockedVersion, sp.Version, sp.RequiredBump).Error()
	var b bytes.Buffer
	if err := Human(&b, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "suggested 1.5.0") || !strings.Contains(out, "declare 1.5.0 or later") {
		t.Errorf("a failed gate should print the failure alone:\n%s", out)
	}
}
