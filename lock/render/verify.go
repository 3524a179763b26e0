package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
)

// VerifyFormatVersion is the version of the JSON form of VerifyReport.
const VerifyFormatVersion = "1.1"

// A server's status in the verify report.
const (
	InSync = "in_sync" // no drift, or informational drift only
	Drift  = "drift"   // drift that fails verify
	Failed = "error"   // the server could not be started or probed
)

// VerifyReport is `mcpform verify`'s report; its JSON form is the
// documented -json output (format_version 1.1: 1.0 with each server's
// findings and semver advice).
type VerifyReport struct {
	FormatVersion string           `json:"format_version"`
	Lock          string           `json:"lock"`
	Approvals     *VerifyApprovals `json:"approvals,omitempty"`
	Servers       []VerifyServer   `json:"servers"`
	ExitCode      int              `json:"exit_code"`
}

// VerifyApprovals is who approved the lock (package approval's report):
// State is "valid", "invalid", "insufficient", "unverified" or
// "unsigned". Approvers and Problems quote the signature file, escaped.
type VerifyApprovals struct {
	State     string   `json:"state"`
	Required  int      `json:"required,omitempty"`
	Approvers []string `json:"approvers"`
	TrustFile string   `json:"trust_file,omitempty"`
	Summary   string   `json:"summary"`
	Problems  []string `json:"problems,omitempty"`
}

// VerifyServer is one server's line of the report.
type VerifyServer struct {
	Name   string        `json:"name"`
	Status string        `json:"status"` // InSync, Drift or Failed
	Drift  []VerifyDrift `json:"drift"`
	// Findings are the drift as plan grades it: one per finding, with the
	// rule id, grade and class plan would give it (format 1.1).
	Findings []VerifyFinding `json:"findings"`
	// RequiredBump is the highest grade of the definitional findings;
	// LockedVersion the lock's declared surface version, and
	// SuggestedVersion it bumped by RequiredBump (plan's semver advice).
	RequiredBump     string `json:"required_bump,omitempty"`
	LockedVersion    string `json:"locked_version,omitempty"`
	SuggestedVersion string `json:"suggested_version,omitempty"`
	Error            string `json:"error,omitempty"`
	// Surface is the saved surface checked instead of a probe (verify
	// -surface), "" for a server probed.
	Surface string `json:"surface,omitempty"`
	// DidNotStart marks an error that is a *mcp.StartError: the text's
	// header then says "did not start", not "could not be probed" (the
	// JSON form's error says it already).
	DidNotStart bool `json:"-"`
}

// VerifyDrift is one difference between the live surface and the lock.
type VerifyDrift struct {
	Class  string `json:"class"`
	Action string `json:"action"`
	Field  string `json:"field"`
	Key    string `json:"key,omitempty"`
}

// VerifyFinding is one graded finding: the address, action, rule id,
// grade, class and security flag a plan made now would show for it.
// Detail and Address can quote the server, and are escaped when printed.
type VerifyFinding struct {
	Address  string `json:"address"`
	Action   string `json:"action"`
	Rule     string `json:"rule"`
	Grade    string `json:"grade"`
	Class    string `json:"class"`
	Security bool   `json:"security_relevant"`
	Detail   string `json:"detail,omitempty"`
	// Item is the address of the item the finding is in, "" for a
	// server-level finding (plan.Change.Item).
	Item string `json:"item,omitempty"`
}

// DriftOf is lock.Compare's result as the report lists it.
func DriftOf(diffs []lock.Drift) []VerifyDrift {
	out := []VerifyDrift{}
	for _, d := range diffs {
		out = append(out, VerifyDrift{Class: d.Class.String(), Action: string(d.Action), Field: d.Field, Key: d.Key})
	}
	return out
}

// VerifyJSON prints the report as indented JSON, HTML characters as they
// are.
func VerifyJSON(w io.Writer, r VerifyReport) error {
	// Lists are [] when empty, never null: consumers iterate them.
	r.Servers = append([]VerifyServer{}, r.Servers...)
	for i := range r.Servers {
		if r.Servers[i].Drift == nil {
			r.Servers[i].Drift = []VerifyDrift{}
		}
		if r.Servers[i].Findings == nil {
			r.Servers[i].Findings = []VerifyFinding{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// Verify prints the report for a person: one line a server, its drift
// below it, and a summary that says why verify failed, if it did.
func Verify(w io.Writer, r VerifyReport) {
	if a := r.Approvals; a != nil && (a.State != "unsigned" || a.TrustFile != "") {
		fmt.Fprintf(w, "Approvals: %s\n", a.Summary)
		for _, p := range a.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	drifted, failed, unread := 0, 0, 0
	for _, s := range r.Servers {
		switch s.Status {
		case InSync:
			if len(s.Drift) == 0 {
				fmt.Fprintf(w, "%s: in sync\n", s.Name)
			} else {
				fmt.Fprintf(w, "%s: in sync (informational drift only)\n", s.Name)
			}
		case Drift:
			drifted++
			fmt.Fprintf(w, "%s: drift\n", s.Name)
			if s.Error != "" {
				for _, l := range strings.Split(s.Error, "\n") {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		case Failed:
			failed++
			if s.Surface != "" {
				unread++
				fmt.Fprintf(w, "%s: saved surface not read\n", s.Name)
			} else if s.DidNotStart {
				fmt.Fprintf(w, "%s: did not start\n", s.Name)
			} else {
				fmt.Fprintf(w, "%s: could not be probed\n", s.Name)
			}
			for _, l := range strings.Split(s.Error, "\n") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		if s.Surface != "" && s.Status != Failed {
			fmt.Fprintf(w, "    (the saved surface %s, nothing started)\n", escape.String(s.Surface))
		}
		shown := make([]bool, len(s.Findings))
		for _, d := range s.Drift {
			what := d.Field
			if d.Key != "" {
				what = singular(d.Field) + " " + escape.String(d.Key)
			}
			fmt.Fprintf(w, "  %s %-40s (%s)\n", d.Action, what, d.Class)
			for i, f := range s.Findings {
				if !shown[i] && findingOf(s.Name, d, f) {
					shown[i] = true
					finding(w, f)
				}
			}
		}
		// Findings no digest-level drift names (none today): still shown.
		for i, f := range s.Findings {
			if !shown[i] {
				finding(w, f)
			}
		}
		if s.RequiredBump != "" && s.RequiredBump != "none" {
			fmt.Fprintf(w, "  required bump: %s", s.RequiredBump)
			if s.SuggestedVersion != "" {
				fmt.Fprintf(w, " (locked version %s: suggested %s)", escape.String(s.LockedVersion), escape.String(s.SuggestedVersion))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	servers := plural(len(r.Servers), "server", "servers")
	switch {
	case failed > 0:
		what := "could not be probed"
		if failed == unread {
			what = "had a saved surface that could not be read"
		}
		fmt.Fprintf(w, "Verify failed: %d of %s %s", failed, servers, what)
		if drifted > 0 {
			fmt.Fprintf(w, " and %d drifted", drifted)
		}
		fmt.Fprintln(w, ".")
	case drifted > 0:
		fmt.Fprintf(w, "Verify failed: %d of %s drifted from the lock. Run mcpform plan to review the changes.\n", drifted, servers)
	default:
		fmt.Fprintf(w, "Verify passed: mcp.lock matches %s.\n", servers)
	}
}

// findingOf reports whether finding f is about drift d of server name:
// f is in d's item, or at the field d names. Findings are addressed as
// plan addresses them ("server.time.tool.get_time.inputSchema…"), the
// drift by field and key.
func findingOf(name string, d VerifyDrift, f VerifyFinding) bool {
	if d.Key != "" {
		return f.Item != "" && strings.HasSuffix(f.Item, "."+itemSegment[d.Field]+"."+d.Key)
	}
	return f.Item == "" && strings.HasSuffix(f.Address, "."+d.Field)
}

// itemSegment is the address segment plan gives each list's items.
var itemSegment = map[string]string{"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource_template",
	"samples": "tool"} // a tool's sample calls (plan.SampleChanges): its findings are the tool's

// finding prints one graded finding under its drift line: the rule, its
// grade, and where inside the item when that is deeper than the item.
func finding(w io.Writer, f VerifyFinding) {
	where := ""
	if f.Item != "" && f.Address != f.Item {
		where = " " + escape.String(strings.TrimPrefix(f.Address, f.Item+"."))
	}
	sec := ""
	if f.Security {
		sec = ", security-relevant"
	}
	fmt.Fprintf(w, "      %s (%s%s)%s\n", f.Rule, f.Grade, sec, where)
	if f.Detail != "" {
		fmt.Fprintf(w, "        %s\n", escape.String(f.Detail))
	}
}

// singular names the item kind of a list field for messages.
func singular(field string) string {
	switch field {
	case "resourceTemplates":
		return "resource template"
	}
	return strings.TrimSuffix(field, "s")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
