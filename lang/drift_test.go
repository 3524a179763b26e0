package lang

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/policy"
)

// TestOnDriftAndExpose: on_drift and expose reach the server's policy;
// quarantine (the default) is stored as "", an absent list stays nil
// (expose all) and an empty one stays empty (expose none).
func TestOnDriftAndExpose(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
server "a" {
  command  = ["srv"]
  on_drift = "block-changed"
  expose {
    tools   = ["search", "get_*"]
    prompts = []
  }
}
server "b" {
  command  = ["srv"]
  on_drift = "quarantine"
}
server "c" {
  command  = ["srv"]
  on_drift = "insecure-warn"
}
`})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	got := map[string]policy.Policy{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.Policy
	}
	want := map[string]policy.Policy{
		"a": {OnDrift: "block-changed", Expose: &policy.Expose{Tools: []string{"search", "get_*"}, Prompts: []string{}}},
		"b": {},
		"c": {OnDrift: "insecure-warn"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
	if got["a"].Expose.Resources != nil {
		t.Errorf("an absent resources list is %#v, want nil (expose all)", got["a"].Expose.Resources)
	}
}

// TestOnDriftWarnSaysWhy: "warn" alone is refused, and the error names
// the value to write and why.
func TestOnDriftWarnSaysWhy(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
server "a" {
  command  = ["srv"]
  on_drift = "warn"
}
`})
	_, diags := Load(dir, Options{Version: "0.1.0"})
	if !diags.HasErrors() {
		t.Fatal("on_drift = \"warn\" was accepted")
	}
	d := diags[0].Detail
	for _, want := range []string{`"insecure-warn"`, "weakens"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail %q does not say %s", d, want)
		}
	}
}
