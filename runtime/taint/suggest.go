package taint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
)

// Label is Suggest's verdict on one tool (or wildcard) and why.
type Label struct {
	Name   string
	Source bool
	Sink   bool
	Why    string
}

// Suggest labels a locked server's tools from their own annotations,
// conservatively: a missing openWorldHint counts as open world (source and
// sink: it reads what others wrote, and its arguments can carry data out),
// a missing readOnlyHint as "may write" (sink). Only readOnlyHint true with
// openWorldHint false is neither. Resources and prompts, when the server
// has any, are labelled sources: their text comes from outside the review.
// Annotations are the server's own claims, which is why this only suggests.
func Suggest(e *lock.Entry) []Label {
	var out []Label
	for _, it := range e.Tools {
		var t struct {
			Annotations *struct {
				ReadOnly    *bool `json:"readOnlyHint"`
				Destructive *bool `json:"destructiveHint"`
				OpenWorld   *bool `json:"openWorldHint"`
			} `json:"annotations"`
		}
		_ = json.Unmarshal(it.JSON, &t)
		var ro, ow, de *bool
		if a := t.Annotations; a != nil {
			ro, ow, de = a.ReadOnly, a.OpenWorld, a.Destructive
		}
		l := Label{Name: it.Key}
		var why []string
		switch {
		case ow == nil:
			l.Source, l.Sink = true, true
			why = append(why, "no openWorldHint: may reach the outside world (source and sink)")
		case *ow:
			l.Source, l.Sink = true, true
			why = append(why, "openWorldHint true: reaches the outside world (source and sink)")
		default:
			why = append(why, "openWorldHint false")
		}
		switch {
		case ro == nil:
			l.Sink = true
			why = append(why, "no readOnlyHint: may write (sink)")
		case !*ro:
			l.Sink = true
			why = append(why, "readOnlyHint false: writes (sink)")
			if de != nil && *de {
				why = append(why, "destructiveHint true")
			}
		default:
			why = append(why, "readOnlyHint true")
		}
		if !l.Source && !l.Sink {
			why = append(why, "neither")
		}
		l.Why = strings.Join(why, "; ")
		out = append(out, l)
	}
	if len(e.Resources) > 0 || len(e.ResourceTemplates) > 0 {
		out = append(out, Label{Name: policy.AllResources, Source: true, Why: "the server has resources: any resources/read may return text others wrote"})
	}
	if len(e.Prompts) > 0 {
		out = append(out, Label{Name: policy.AllPrompts, Source: true, Why: "the server has prompts: any prompts/get may return text others wrote"})
	}
	return out
}

// RenderHCL prints labels as a taint block for server name's block in
// mcp.hcl, a comment per name saying why. Names and reasons are quoted for
// HCL and escaped, so a tool name cannot end the comment or the string and
// write policy of its own.
func RenderHCL(name string, labels []Label) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Suggested taint policy for server %s, from its tools' own annotations in mcp.lock.\n", escape.HCLString(name))
	b.WriteString("# Annotations are the server's claims: review every line before pasting this\n")
	b.WriteString("# into the server's block in mcp.hcl, then run mcpform plan and mcpform apply.\n")
	b.WriteString("taint {\n")
	list := func(field string, pick func(Label) bool) {
		var names []Label
		for _, l := range labels {
			if pick(l) {
				names = append(names, l)
			}
		}
		if len(names) == 0 {
			fmt.Fprintf(&b, "  %s = []\n", field)
			return
		}
		fmt.Fprintf(&b, "  %s = [\n", field)
		for _, l := range names {
			fmt.Fprintf(&b, "    %s, # %s\n", escape.HCLString(l.Name), l.Why)
		}
		b.WriteString("  ]\n")
	}
	list("sources", func(l Label) bool { return l.Source })
	list("sinks", func(l Label) bool { return l.Sink })
	var neither []Label
	for _, l := range labels {
		if !l.Source && !l.Sink {
			neither = append(neither, l)
		}
	}
	if len(neither) > 0 {
		b.WriteString("  # Neither source nor sink:\n")
		for _, l := range neither {
			fmt.Fprintf(&b, "  #   %s: %s\n", escape.HCLString(l.Name), l.Why)
		}
	}
	b.WriteString("}\n")
	return b.String()
}
