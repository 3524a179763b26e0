package plan

import (
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
)

// TestPolicyWeakenedIsSecurityRelevant: a policy change that makes run
// enforce less (on_drift weakened, expose widened) is a security-relevant
// CFG-POLICY-CHANGED saying what weakened; one that makes it enforce more
// is a plain one.
func TestPolicyWeakenedIsSecurityRelevant(t *testing.T) {
	entry := func(p *policy.Policy) *lock.Entry {
		e := withTools(t, "get_issue", "search", "delete_repo")
		e.Policy = p
		return e
	}
	for _, tt := range []struct {
		name     string
		old, new *policy.Policy
		security bool
		detail   string
	}{
		{"quarantine to block-changed", nil, &policy.Policy{OnDrift: policy.DriftBlockChanged}, true, `on_drift weakened from "quarantine" to "block-changed"`},
		{"block-changed to insecure-warn", &policy.Policy{OnDrift: policy.DriftBlockChanged}, &policy.Policy{OnDrift: policy.DriftInsecureWarn}, true, `to "insecure-warn"`},
		{"insecure-warn to quarantine", &policy.Policy{OnDrift: policy.DriftInsecureWarn}, nil, false, ""},
		{"expose added", nil, &policy.Policy{Expose: &policy.Expose{Tools: []string{"get_*"}}}, false, ""},
		{"expose widened", &policy.Policy{Expose: &policy.Expose{Tools: []string{"get_*"}}}, &policy.Policy{Expose: &policy.Expose{Tools: []string{"get_*", "delete_*"}}}, true, `expose widened to tool "delete_repo"`},
		{"expose removed", &policy.Policy{Expose: &policy.Expose{Tools: []string{"get_*"}}}, nil, true, `tool "delete_repo", tool "search"`},
		{"expose narrowed", &policy.Policy{Expose: &policy.Expose{Tools: []string{"*"}}}, &policy.Policy{Expose: &policy.Expose{Tools: []string{"search"}}}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var found *Change
			for _, c := range configChanges("server.s", entry(tt.old), entry(tt.new)) {
				if c.Rule == "CFG-POLICY-CHANGED" {
					found = &c
				}
			}
			if found == nil {
				t.Fatal("no CFG-POLICY-CHANGED")
			}
			if found.Security != tt.security || !strings.Contains(found.Detail, tt.detail) {
				t.Errorf("security %v, detail %q; want %v and %q", found.Security, found.Detail, tt.security, tt.detail)
			}
			if found.Class != Config || found.Grade != None {
				t.Errorf("class %s grade %s, want config, none", found.Class, found.Grade)
			}
		})
	}
}

// TestCheckExpose: a pattern that matches no item of the live surface or
// the lock is an error saying what was meant.
func TestCheckExpose(t *testing.T) {
	live := withTools(t, "get_issue", "search")
	srv := func(x *policy.Expose) *lang.Server { return &lang.Server{Name: "s", Policy: policy.Policy{Expose: x}} }
	if err := checkExpose(srv(&policy.Expose{Tools: []string{"get_*", "search"}, Prompts: []string{}}), nil, live); err != nil {
		t.Errorf("patterns that match: %v", err)
	}
	err := checkExpose(srv(&policy.Expose{Tools: []string{"serch"}}), nil, live)
	if err == nil || !strings.Contains(err.Error(), `"serch" matches none`) || !strings.Contains(err.Error(), `Did you mean "search"?`) {
		t.Errorf("a typo: %v", err)
	}
	if err := checkExpose(srv(&policy.Expose{Resources: []string{"file:///*"}}), nil, live); err == nil {
		t.Error("a resources pattern for a server without resources was accepted")
	}
	old := withTools(t, "gone_tool")
	if err := checkExpose(srv(&policy.Expose{Tools: []string{"gone_*"}}), old, live); err != nil {
		t.Errorf("a pattern that matches a locked item: %v", err)
	}
}

// TestInsecureWarnNote: every plan of a server under insecure-warn warns.
func TestInsecureWarnNote(t *testing.T) {
	e := withTools(t, "a")
	e.Policy = &policy.Policy{OnDrift: policy.DriftInsecureWarn}
	notes := insecureWarnNote(&ServerPlan{Name: "s", Entry: e})
	if len(notes) != 1 || !strings.Contains(notes[0], "warning") || !strings.Contains(notes[0], "weakened") {
		t.Errorf("notes = %q", notes)
	}
	e.Policy.OnDrift = policy.DriftBlockChanged
	if n := insecureWarnNote(&ServerPlan{Name: "s", Entry: e}); n != nil {
		t.Errorf("block-changed notes %q", n)
	}
}
