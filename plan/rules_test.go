package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryRuleIsCatalogued: every rule a Change produced by the tests
// carries is in the catalogue, and every MCP rule of the catalogue is
// produced by some test, so the two cannot drift apart. CFG and GATE rules
// are emitted outside this file's tests (the config diff, the gate).
func TestEveryRuleIsCatalogued(t *testing.T) {
	t.Run("tools", TestDiffTools)
	t.Run("prompts", TestDiffPromptsResources)
	t.Run("renames", TestDiffRenames)
	t.Run("samples", TestSampleChanges)
	t.Run("sample results", TestSamplesRugPull)
	t.Run("sample gate", TestSamplesGate)
	t.Run("server", TestDiffServerFields)
	t.Run("pins", TestPinChanges)
	t.Run("npm", TestNPMChanges)
	t.Run("image", TestImageChanges)
	t.Run("pypi", TestPyPIChanges)
	t.Run("cosmetic", TestCosmeticTexts)
	t.Run("judged", TestJudgedTexts)
	for id := range seenRules {
		if _, ok := LookupRule(id); !ok {
			t.Errorf("a change carries rule %s, which is not in the catalogue", id)
		}
	}
	for _, r := range Rules() {
		if (strings.HasPrefix(r.ID, "MCP-") || strings.HasPrefix(r.ID, "PKG-")) && !seenRules[r.ID] {
			t.Errorf("rule %s is in the catalogue but no test produces it", r.ID)
		}
	}
}

func TestCatalogue(t *testing.T) {
	for _, id := range []string{"CFG-SERVER-ADDED", "CFG-SERVER-REMOVED", "CFG-COMMAND-CHANGED", "CFG-ENV-CHANGED",
		"CFG-PROTOCOL-CHANGED", "CFG-VERSION-CHANGED", "CFG-CLIENT-CAPABILITIES-CHANGED", "CFG-POLICY-CHANGED",
		"CFG-URL-CHANGED", "CFG-HEADERS-CHANGED", "CFG-AUTH-CHANGED", "REMOTE-TRANSPORT-CHANGED"} {
		r, ok := LookupRule(id)
		if !ok || r.Class != Config || r.Grade != None {
			t.Errorf("LookupRule(%s) = %+v, %v; want a config rule graded none", id, r, ok)
		}
	}
	if _, ok := LookupRule("GATE-VERSION-UNDERBUMP"); !ok {
		t.Error("GATE-VERSION-UNDERBUMP missing")
	}
	for _, r := range Rules() {
		if r.Summary == "" || r.Detail == "" || r.Example == "" {
			t.Errorf("rule %s lacks a summary, detail or example", r.ID)
		}
		if strings.ToUpper(r.ID) != r.ID || strings.ContainsAny(r.ID, " _") {
			t.Errorf("rule id %q breaks the SOURCE-SUBJECT-EVENT scheme", r.ID)
		}
		if r.Security && r.Class != Definitional && r.Class != Code {
			t.Errorf("rule %s: only definitional and code changes are security-relevant", r.ID)
		}
		if strings.HasPrefix(r.ID, "PKG-") != (r.Class == Code) {
			t.Errorf("rule %s: PKG- rules, and only they, are of class code", r.ID)
		}
	}
	if _, ok := LookupRule("MCP-NO-SUCH-RULE"); ok {
		t.Error("LookupRule found a rule that does not exist")
	}
}

func TestCheckVersionBump(t *testing.T) {
	tests := []struct {
		prev, declared string
		required       Grade
		want           string // "" for ok
	}{
		{"", "1.0.0", Major, ""},
		{"1.4.0", "2.0.0", Major, ""},
		{"1.4.0", "3.0.0", Major, ""},
		{"1.4.0", "1.5.0", Major, "version 1.5.0 under-bumps 1.4.0: the surface needs a major bump, declare 2.0.0 or later (GATE-VERSION-UNDERBUMP)"},
		{"1.4.0", "1.4.0", Major, "version 1.4.0 is unchanged but the surface needs a major bump: declare 2.0.0 or later (GATE-VERSION-UNDERBUMP)"},
		{"1.4.0", "1.5.0", Minor, ""},
		{"1.4.0", "2.0.0", Minor, ""},
		{"1.4.2", "1.4.3", Minor, "version 1.4.3 under-bumps 1.4.2: the surface needs a minor bump, declare 1.5.0 or later (GATE-VERSION-UNDERBUMP)"},
		{"1.4.2", "1.4.3", Patch, ""},
		{"1.4.2", "1.4.2", Patch, "version 1.4.2 is unchanged but the surface needs a patch bump: declare 1.4.3 or later (GATE-VERSION-UNDERBUMP)"},
		{"1.4.2", "1.4.2", None, ""},
		{"1.4.2", "1.3.0", None, "version 1.3.0 is lower than the locked 1.4.2 (GATE-VERSION-UNDERBUMP)"},
		{"1.4.0", "", Major, ""}, // the version removed from mcp.hcl: no gate
		{"1.4.2", "nope", None, `declared version "nope" is not a semantic version: invalid semantic version`},
		{"18446744073709551615.0.0", "18446744073709551615.0.0", Major, `locked version "18446744073709551615.0.0" cannot take a major bump: its major number is the largest there is`},
	}
	for _, tt := range tests {
		err := CheckVersionBump(tt.prev, tt.declared, tt.required)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("CheckVersionBump(%q, %q, %v) (-want +got):\n%s", tt.prev, tt.declared, tt.required, d)
		}
	}
	var be *bumpError
	if err := CheckVersionBump("1.0.0", "1.0.1", Major); !errors.As(err, &be) || be.Want != "2.0.0" {
		t.Errorf("want a *bumpError wanting 2.0.0, got %v", err)
	}
}

func TestSuggestVersion(t *testing.T) {
	tests := []struct {
		prev     string
		required Grade
		want     string
	}{
		{"1.4.2", Major, "2.0.0"},
		{"1.4.2", Minor, "1.5.0"},
		{"1.4.2", Patch, "1.4.3"},
		{"1.4.2", None, "1.4.2"},
		{"0.3.1", Major, "1.0.0"},
		{"1.5.0-rc.1", Patch, "1.5.0"}, // the release is the next version after its candidate
		{"1.5.0+build.7", Minor, "1.6.0"},
		{"", Major, ""},     // nothing locked: nothing to bump from
		{"nope", Major, ""}, // the gate reports the bad version
		{"1.18446744073709551615.0", Minor, ""},
	}
	for _, tt := range tests {
		if got := SuggestVersion(tt.prev, tt.required); got != tt.want {
			t.Errorf("SuggestVersion(%q, %v) = %q, want %q", tt.prev, tt.required, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		// The advice is what the gate accepts, and the least it accepts.
		if err := CheckVersionBump(tt.prev, tt.want, tt.required); err != nil {
			t.Errorf("the gate refuses the suggested %s after %s (%v): %v", tt.want, tt.prev, tt.required, err)
		}
	}
}
