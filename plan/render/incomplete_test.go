package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/plan"
)

// TestIncompleteTotals: a plan with a failed server does not close with
// the totals of a plan: the human and markdown forms say it is incomplete
// and how many servers failed, and JSON lists the errors; a plan without
// errors closes with "Plan:" as before.
func TestIncompleteTotals(t *testing.T) {
	added := func(name string) *plan.ServerPlan {
		return &plan.ServerPlan{Name: name, Addr: "server." + name, Action: plan.Create, New: true,
			Changes: []plan.Change{{Addr: "server." + name + ".command", Action: plan.Create, Class: plan.Config, Rule: "CFG-SERVER-ADDED"}}}
	}
	failed := &plan.ServerPlan{Name: "fetch", Addr: "server.fetch", New: true,
		Error: `probing server "fetch": start: the server did not start: it could not be run`}
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Servers: []*plan.ServerPlan{failed, added("memory"), added("time")}}

	var out, errs bytes.Buffer
	if err := Human(&out, p, Options{Errors: &errs}); err != nil {
		t.Fatal(err)
	}
	h := out.String()
	if !strings.Contains(h, "\nPlan incomplete: 1 of 3 servers failed; fix the errors above.\nPlanned so far: 2 to add, 0 to change, 0 to remove.") {
		t.Errorf("human plan does not close as incomplete:\n%s", h)
	}
	if strings.Contains(h, "\nPlan: ") {
		t.Errorf("human plan with errors has the totals line of a plan:\n%s", h)
	}
	if !strings.Contains(errs.String(), "Error: server.fetch: ") {
		t.Errorf("errors writer: %q", errs.String())
	}

	var md bytes.Buffer
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**Plan incomplete:** 1 of 3 servers failed; fix the errors below.") || strings.Contains(md.String(), "**Plan:**") {
		t.Errorf("markdown does not say the plan is incomplete:\n%s", md.String())
	}

	var js bytes.Buffer
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	var got struct{ Errors []string }
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Errors) != 1 || !strings.HasPrefix(got.Errors[0], "server.fetch: ") {
		t.Errorf("JSON errors = %q, want the one failed server", got.Errors)
	}

	// Every server failed: nothing was planned, so no totals of zeros.
	all := &plan.Plan{FormatVersion: plan.FormatVersion, Servers: []*plan.ServerPlan{failed}}
	out.Reset()
	md.Reset()
	if err := Human(&out, all, Options{Errors: &errs}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, all); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Plan incomplete: 1 of 1 servers failed; fix the errors above.\n") ||
		!strings.Contains(md.String(), "**Plan incomplete:** 1 of 1 servers failed; fix the errors below.\n") ||
		strings.Contains(out.String()+md.String(), "Planned so far") {
		t.Errorf("a plan whose every server failed shows totals:\n%s\n%s", out.String(), md.String())
	}

	// Without the failure: a plan's totals, and nothing incomplete.
	p.Servers = p.Servers[1:]
	out.Reset()
	md.Reset()
	if err := Human(&out, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nPlan: 2 to add, 0 to change, 0 to remove.") || strings.Contains(out.String()+md.String(), "incomplete") ||
		!strings.Contains(md.String(), "**Plan:** 2 to add") {
		t.Errorf("a plan without errors:\n%s\n%s", out.String(), md.String())
	}
}
